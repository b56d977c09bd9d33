// Configuration of secret redaction (`security.redact`): a list of named rules, each giving
// exactly one of a literal secret value, the name of an environment variable whose value is
// a secret, or a regular expression (RE2 syntax: linear time, no backreferences). Every match in an
// effect's result is replaced by "[REDACTED:<name>]". Used by loom::app (TOML and C++
// config) and by RedactionMiddleware. Plain values; validation is a pure function.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loom/middleware/config_issue.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace loom::middleware {

// The name of the redaction layer in the chain.
inline constexpr std::string_view kRedactionName = "redaction";
// A literal secret (or an environment variable's value) shorter than this would redact
// ordinary text, so it is refused.
inline constexpr std::size_t kMinSecretChars = 4;
inline constexpr std::size_t kMaxRuleNameChars = 64;

struct RedactionRule {
  std::string name;     // [A-Za-z0-9_.-]{1,64}, unique: shown in the marker
  std::string value;    // a literal secret, or
  std::string env;      // an environment variable whose value is the secret, or
  std::string pattern;  // a regular expression; must not match the empty string
};

// Checks `rules` and returns every problem, paths written as "<path>[i].<field>" (path is
// "security.redact" in the app's config). Compiles each pattern to check it; reads no
// environment variable (that happens when the middleware is built, at boot).
ConfigIssues validateRedactionRules(const std::vector<RedactionRule>& rules, std::string_view path);

// "[REDACTED:<name>]".
std::string redactionMarker(std::string_view name);

// The one way a redaction pattern is compiled (validation and the middleware): RE2, errors
// kept in the object (check ok()), not logged.
std::shared_ptr<const re2::RE2> compileRedactionPattern(const std::string& pattern);

}  // namespace loom::middleware
