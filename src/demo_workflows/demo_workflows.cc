#include "demo_workflows/demo_workflows.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include "loom/util/clock.h"
#include "loom/util/error.h"

namespace loom::demo_workflows {
namespace {

constexpr int64_t kMaxSteps = 100'000;
constexpr int64_t kMaxSleepMs = 3'600'000;
constexpr std::string_view kInputExample =
    R"({"steps": 5, "sleepMs": 100, "witness": "/tmp/witness.txt"})";

struct StepsInput {
  int64_t steps = 0;
  int64_t sleepMs = 0;
  std::optional<std::string> witness;
};

[[noreturn]] void badField(std::string_view who, std::string_view field, std::string_view want,
                           const json::value* got) {
  std::string message = std::string(who) + ": input field \"" + std::string(field) + "\" must be " +
                        std::string(want);
  message += got ? ", got " + json::toText(*got) : ", but it is missing";
  throw InvalidArgumentError(message + " (example input: " + std::string(kInputExample) + ")");
}

int64_t intField(std::string_view who, const json::object& o, std::string_view field, int64_t min,
                 int64_t max, std::optional<int64_t> fallback) {
  const json::value* v = o.if_contains(field);
  std::string want = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (v == nullptr || v->is_null()) {
    if (fallback) return *fallback;
    badField(who, field, want, nullptr);
  }
  // A uint64 value is above INT64_MAX, so above every bound.
  if (!v->is_int64() || v->get_int64() < min || v->get_int64() > max) {
    badField(who, field, want, v);
  }
  return v->get_int64();
}

std::optional<std::string> witnessField(std::string_view who, const json::object& o) {
  const json::value* v = o.if_contains("witness");
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string() || v->get_string().empty()) {
    badField(who, "witness", "a non-empty file path", v);
  }
  return std::string(v->get_string());
}

const json::object& inputObject(std::string_view who, const json::value& input) {
  if (!input.is_object()) {
    throw InvalidArgumentError(std::string(who) + ": input must be a JSON object, got " +
                               json::toText(input) +
                               " (example input: " + std::string(kInputExample) + ")");
  }
  return input.get_object();
}

StepsInput parseStepsInput(const json::value& input) {
  const auto& o = inputObject(kStepsWorkflow, input);
  StepsInput in;
  in.steps = intField(kStepsWorkflow, o, "steps", 1, kMaxSteps, std::nullopt);
  in.sleepMs = intField(kStepsWorkflow, o, "sleepMs", 0, kMaxSleepMs, 0);
  in.witness = witnessField(kStepsWorkflow, o);
  return in;
}

// Appends `line` and a newline to `path` and fsyncs it, so the line survives a SIGKILL the
// moment this returns.
void appendLine(const std::string& path, const std::string& line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw InvalidArgumentError("cannot open witness file '" + path + "' for appending: " +
                               std::strerror(errno) + "; pass a path in a writable folder");
  }
  std::string text = line + "\n";
  std::size_t done = 0;
  int error = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  ::close(fd);
  if (error != 0) {
    throw UnavailableError("cannot write witness file '" + path + "': " + std::strerror(error));
  }
}

json::value runStep(const effects::EffectContext& ctx, json::value input) {
  constexpr std::string_view kWho = "example.step";
  const auto& o = inputObject(kWho, input);
  int64_t i = intField(kWho, o, "i", 1, kMaxSteps, std::nullopt);
  int64_t sleepMs = intField(kWho, o, "sleepMs", 0, kMaxSleepMs, 0);
  std::optional<std::string> witness = witnessField(kWho, o);
  if (sleepMs > 0) systemClock()->sleepMillis(sleepMs);
  if (witness) appendLine(*witness, ctx.stepId);
  return json::object{{"i", i}};
}

json::value stepsWorkflow(workflow::WorkflowContext& ctx) {
  StepsInput in = parseStepsInput(ctx.input());
  for (int64_t i = 1; i <= in.steps; ++i) {
    json::object stepInput{{"i", i}, {"sleepMs", in.sleepMs}};
    if (in.witness) stepInput["witness"] = *in.witness;
    ctx.effect("step-" + std::to_string(i), kStepEffect, std::move(stepInput));
  }
  return in.steps;
}

// {"sleepMs": M}: one step, a durable timer of M ms, one step; output the time it woke.
json::value timerWorkflow(workflow::WorkflowContext& ctx) {
  const auto* o = ctx.input().if_object();
  const auto* ms = o ? o->if_contains("sleepMs") : nullptr;
  if (ms == nullptr || !ms->is_int64() || ms->get_int64() < 0) {
    throw InvalidArgumentError("example.timer takes {\"sleepMs\": <milliseconds, >= 0>}");
  }
  ctx.step("before", [] { return json::value("slept from here"); });
  ctx.sleep("nap", std::chrono::milliseconds(ms->get_int64()));
  return ctx.step("after", [] { return json::value(json::object{{"woke", true}}); });
}

json::value approvalWorkflow(workflow::WorkflowContext& ctx) {
  ctx.step("request", [] { return json::value(json::object{{"requested", true}}); });
  json::value payload = ctx.awaitSignal("approve");
  return ctx.step("apply", [&] { return json::value(json::object{{"approval", payload}}); });
}

}  // namespace

void registerDemoWorkflows(workflow::WorkflowRegistry& workflows, effects::TaskRegistry& tasks) {
  tasks.add(effects::TaskDefinition{.id = std::string(kStepEffect),
                                    .kind = std::string(effects::kKindFlow),
                                    .description = "sleeps sleepMs, then appends its step id "
                                                   "to the witness file"},
            runStep);
  workflows.add(std::string(kStepsWorkflow),
                R"(N effect steps; input {"steps": N, "sleepMs": M, "witness": PATH}; )"
                "output N",
                stepsWorkflow);
  workflows.add(std::string(kTimerWorkflow),
                R"(a durable timer; input {"sleepMs": M}: parks with reason "timer" until due)",
                timerWorkflow);
  workflows.add(std::string(kApprovalWorkflow),
                R"(one step, then waits for signal "approve"; output {"approval": payload})",
                approvalWorkflow);
}

}  // namespace loom::demo_workflows
