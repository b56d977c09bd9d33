// Secret redaction (`security.redact`): scrubs configured secrets from every effect result
// before any outer layer (claim-check, the journal, the workflow) sees it. Every string
// anywhere in the result's JSON is checked, object keys included, and every number (by its
// JSON text: a number holding a secret becomes the marker string); each match becomes
// "[REDACTED:<name>]". Literal secrets (values and environment variables) are applied
// longest first, then patterns (RE2 syntax, linear time: no input can make a match recurse
// or run long) in configured order. The error message of an effect that throws is scrubbed
// too (the runtime journals it). Inputs pass to the effect unchanged (it may need the secret);
// boot installs redact() as RuntimeOptions::journalFilter, so the journaled copy of each
// input, the run's input and output and signal payloads are scrubbed as well.
// Thread-safety: immutable after construction; invoke and redact may run on many threads.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/effects/middleware.h"
#include "loom/middleware/redaction_config.h"
#include "loom/middleware/warn_sink.h"
#include "loom/util/error.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace loom::middleware {

class RedactionMiddleware : public effects::Middleware {
 public:
  // Validates the rules (ConfigError listing every problem, paths "security.redact[i]..."),
  // reads each `env` variable now and compiles each pattern once. An unset variable is
  // reported through `onWarn` (nothing to redact for it); a set one shorter than
  // kMinSecretChars is a ConfigError.
  explicit RedactionMiddleware(const std::vector<RedactionRule>& rules, WarnSink onWarn = {});

  std::string_view name() const override { return kRedactionName; }
  // Returns redact(next(...)); an exception from next whose message holds a secret is
  // rethrown as a loom::Error with the same code and a scrubbed message.
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override;

  // `v` with every secret replaced, in every string and object key.
  json::value redact(json::value v) const;
  // Replaces every secret in `text`; returns whether anything was replaced.
  bool redactText(std::string& text) const;
  std::size_t ruleCount() const { return rules_.size(); }

 private:
  struct CompiledRule {
    std::string marker;
    std::string literal;  // a value or an environment variable's value
    std::shared_ptr<const re2::RE2> pattern;  // null for a literal
  };
  void redactInPlace(json::value& v) const;
  std::vector<CompiledRule> rules_;
};

}  // namespace loom::middleware
