// The `loom` command line as a library: run, resume, signal and inspect durable executions
// stored under a Loom home folder (--home, LOOM_HOME, default ./.loom), run agent apps defined
// in loom.toml files, stop and restart effects (the kill switch) and check config files. The
// stock `loom` binary registers the example workflows and calls main(); a program that embeds
// Loom registers its own workflows and tasks and calls main() to get the same subcommands
// (docs/cli.md lists them). Not thread-safe: call it once, from the program's main thread.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "loom/app/config.h"
#include "loom/effects/task.h"
#include "loom/workflow/workflow.h"

namespace loom::cli {

// Exit codes of main(); docs/cli.md explains them.
inline constexpr int kExitOk = 0;       // success; also a run that parked (waits for a signal)
inline constexpr int kExitFailure = 1;  // a runtime error, or a run that ended `failed`
inline constexpr int kExitUsage = 2;    // bad command line: unknown flag, bad JSON, ...

// Parses argv, runs one subcommand against the registries and returns the process exit code.
// Results go to stdout; every error goes to stderr as one line "loom: <message>". Throws
// nothing: every error is reported and mapped to an exit code. `loom run app.toml` registers
// the agent app's workflow and tasks in the registries before it boots, so they are not
// const; they must not be used by another thread meanwhile.
int main(int argc, char** argv, workflow::WorkflowRegistry& workflows,
         effects::TaskRegistry& tasks);
// The same, with the program's own Config (defineConfig): what run, resume and signal boot
// when no --config file is given (its storage.home applies unless --home or LOOM_HOME is
// given), so an embedder's workflows and agents get every group it sets.
int main(int argc, char** argv, workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks,
         std::shared_ptr<const app::Config> config);

// One subcommand in this process, for a host that drives Loom from another language (the
// Python and Node.js packages): `args` is the line after the program name (`{"ls", "--json"}`).
// Results go to `out`; an error is thrown, not printed: host::UsageError (an
// InvalidArgumentError) for a bad line, and whatever the subcommand throws otherwise (a
// loom::Error, app::ConfigValidationError, ...). Returns the exit code of a subcommand that
// reports by code (a run that ended failed: kExitFailure; nothing is printed on stderr).
// Calls may run at once on several threads, each in a session of its own; the registries
// must not change meanwhile.
int invoke(std::vector<std::string> args, workflow::WorkflowRegistry& workflows,
           effects::TaskRegistry& tasks, std::shared_ptr<const app::Config> config,
           std::ostream& out);

}  // namespace loom::cli
