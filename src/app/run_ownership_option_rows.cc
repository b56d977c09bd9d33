#include "run_ownership_option_rows.h"

#include "loom/effects/task.h"
#include "option_row_support.h"

namespace loom::app {
namespace {

using workflow::RetryOverride;
using workflow::RetryPolicy;

// One numeric field of RetryPolicy, as a row of the table and of an override entry.
struct RetryField {
  const char* key;
  OptionType type;
  const char* description;
  double min;
  double max;
  // Reads and writes the field as a double (integers are exact up to 2^53).
  double (*get)(const RetryPolicy&);
  void (*set)(RetryPolicy&, double);
  void (*override)(RetryOverride&, double);
};

const std::vector<RetryField>& retryFields() {
  static const std::vector<RetryField> kFields = {
      {"maxAttempts", OptionType::kInteger,
       "Attempts of one step in all, the first included, counted across processes and "
       "restarts; `1` fails the step at its first retryable failure.",
       1, workflow::kMaxRetryAttempts, [](const RetryPolicy& p) { return double(p.maxAttempts); },
       [](RetryPolicy& p, double v) { p.maxAttempts = static_cast<int>(v); },
       [](RetryOverride& o, double v) { o.maxAttempts = static_cast<int>(v); }},
      {"initialIntervalMs", OptionType::kInteger,
       "Milliseconds between the first failed attempt and the second.", 1,
       double(workflow::kMaxRetryIntervalMillis),
       [](const RetryPolicy& p) { return double(p.initialIntervalMillis); },
       [](RetryPolicy& p, double v) { p.initialIntervalMillis = static_cast<int64_t>(v); },
       [](RetryOverride& o, double v) { o.initialIntervalMillis = static_cast<int64_t>(v); }},
      {"maxIntervalMs", OptionType::kInteger,
       "The cap of one wait, at least initialIntervalMs. A server's Retry-After longer than "
       "the wait is honoured.",
       1, double(workflow::kMaxRetryIntervalMillis),
       [](const RetryPolicy& p) { return double(p.maxIntervalMillis); },
       [](RetryPolicy& p, double v) { p.maxIntervalMillis = static_cast<int64_t>(v); },
       [](RetryOverride& o, double v) { o.maxIntervalMillis = static_cast<int64_t>(v); }},
      {"multiplier", OptionType::kNumber, "Each wait is this many times the previous one.", 1,
       workflow::kMaxRetryMultiplier, [](const RetryPolicy& p) { return p.multiplier; },
       [](RetryPolicy& p, double v) { p.multiplier = v; },
       [](RetryOverride& o, double v) { o.multiplier = v; }},
      {"jitter", OptionType::kNumber,
       "Each wait is scaled by a random factor in [1 - jitter, 1], so runs that failed "
       "together do not retry together.",
       0, 1, [](const RetryPolicy& p) { return p.jitter; },
       [](RetryPolicy& p, double v) { p.jitter = v; },
       [](RetryOverride& o, double v) { o.jitter = v; }},
  };
  return kFields;
}

OptionValue valueOf(const RetryField& f, double v) {
  if (f.type == OptionType::kInteger) return OptionValue(static_cast<int64_t>(v));
  return OptionValue(v);
}

void addOverride(Config& c, const OptionEntry& entry, const std::string&, ConfigIssues&) {
  std::string effectId;
  RetryOverride o;
  for (const auto& [key, value] : entry) {
    if (key == "name") {
      effectId = std::get<std::string>(value);
      continue;
    }
    for (const auto& f : retryFields()) {
      if (key == f.key) f.override(o, numberOf(value));
    }
  }
  c.execution.retry.effects[effectId] = o;
}

std::string showOverrides(const Config& c) {
  std::string out = "{";
  for (const auto& [id, o] : c.execution.retry.effects) {
    RetryPolicy p = c.execution.retry.forEffect(id);
    out += (out.size() > 1 ? ", " : "") + id +
           " = {maxAttempts = " + std::to_string(p.maxAttempts) +
           ", initialIntervalMs = " + std::to_string(p.initialIntervalMillis) +
           ", maxIntervalMs = " + std::to_string(p.maxIntervalMillis) +
           ", multiplier = " + optionValueText(OptionValue(p.multiplier)) +
           ", jitter = " + optionValueText(OptionValue(p.jitter)) + "}";
  }
  return out + "}";
}

}  // namespace

void addRunOwnershipRows(std::vector<OptionRow>& rows) {
  addOptionRow(rows, "execution.retry", OptionType::kTable,
               "Durable retries (docs/operations.md, \"Retries\"): a step whose effect fails "
               "with a retryable error (unavailable, deadlineExceeded: a server down, "
               "rate-limited or too slow) after the in-process retries is recorded as an "
               "attempt and the run parks `retrying` until its next attempt, which a `loom "
               "worker` runs (or `loom retry ID` at once). Any other failure, or the last "
               "attempt's, fails the step as before. (A result the content store could not "
               "take is retried every maxIntervalMs, without a limit: it is not the effect's "
               "failure.)");
  RetryPolicy defaults;
  for (const auto& f : retryFields()) {
    OptionRow& r = addOptionRow(rows, std::string("execution.retry.") + f.key, f.type,
                                f.description, optionValueText(valueOf(f, f.get(defaults))));
    r.min = f.min;
    r.max = f.max;
    r.set = [&f](Config& c, OptionValue v) { f.set(c.execution.retry.policy, numberOf(v)); };
    r.get = [&f](const Config& c) { return valueOf(f, f.get(c.execution.retry.policy)); };
  }
  {
    OptionRow& r = addOptionRow(rows, "execution.retry.effects", OptionType::kTableMap,
                                "Per effect id (a tool's name, a model's id such as "
                                "`\"openai:gpt-4o-mini\"`), fields that replace the ones "
                                "above for its steps: `effects.search = { maxAttempts = 3 }`. "
                                "Boot refuses an id the app does not register (`loom config "
                                "check` cannot tell for an app with MCP servers: their tools "
                                "are listed when it runs).",
                                "{}");
    r.addEntry = addOverride;
    r.show = showOverrides;
  }
  for (const auto& f : retryFields()) {
    OptionRow& r = addOptionRow(rows, std::string("execution.retry.effects[].") + f.key, f.type,
                                f.description);
    r.min = f.min;
    r.max = f.max;
  }
  {
    OptionRow& r = addOptionRow(
        rows, "execution.retry.waitInlineUpToMs", OptionType::kInteger,
        "A wait for the next attempt of at most this long is waited out by the process that "
        "ran the step (`loom run` goes on through a short outage with no worker); a longer "
        "one leaves the run parked `retrying` for a worker. `0`: never wait.",
        "30000");
    r.min = 0;
    r.max = double(workflow::kMaxRetryIntervalMillis);
    r.set = [](Config& c, OptionValue v) {
      c.execution.retry.waitInlineUpToMillis = std::get<int64_t>(v);
    };
    r.get = [](const Config& c) { return OptionValue(c.execution.retry.waitInlineUpToMillis); };
  }
  {
    OptionRow& r = addOptionRow(
        rows, "execution.leaseTtlMs", OptionType::kInteger,
        "How long a run's lease holds without a heartbeat (docs/spec/leases.md; renewed every "
        "third of it): after its process dies, a worker or `loom resume` on another host may "
        "take the run over once this has passed (on the same host, at once).",
        "15000");
    r.min = 1000;
    r.max = 3'600'000;
    r.set = [](Config& c, OptionValue v) { c.execution.leaseTtlMillis = std::get<int64_t>(v); };
    r.get = [](const Config& c) { return OptionValue(c.execution.leaseTtlMillis); };
  }
}

void validateRunOwnership(const Config& config, const middleware::KnownTasks& tasks,
                          ConfigIssues& issues) {
  for (const auto& problem : workflow::durableRetryProblems(config.execution.retry)) {
    issues.push_back({problem.path, problem.message});
  }
  if (tasks.registry == nullptr || tasks.moreToolsAtRun) return;
  for (const auto& [id, o] : config.execution.retry.effects) {
    if (tasks.registry->find(id) != nullptr) continue;
    std::string ids;
    for (const auto& known : tasks.registry->ids()) ids += (ids.empty() ? "" : ", ") + known;
    issues.push_back({"execution.retry.effects." + id,
                      "'" + id +
                          "' is no effect of this app, so this override would change "
                          "nothing; the app's effects are " +
                          (ids.empty() ? std::string("none") : ids) + "; check the spelling"});
  }
}

}  // namespace loom::app
