// The stock `loom` binary: the command line of loom::cli::main with the example workflows
// (example.steps, example.approval) registered. A program that embeds Loom writes the same
// few lines with its own registrations.
#include "demo_workflows/demo_workflows.h"
#include "loom/cli/cli.h"

int main(int argc, char** argv) {
  loom::workflow::WorkflowRegistry workflows;
  loom::effects::TaskRegistry tasks;
  loom::demo_workflows::registerDemoWorkflows(workflows, tasks);
  return loom::cli::main(argc, argv, workflows, tasks);
}
