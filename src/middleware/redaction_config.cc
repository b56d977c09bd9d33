#include "loom/middleware/redaction_config.h"

#include <re2/re2.h>

#include <set>

namespace loom::middleware {
namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

bool isEnvName(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string redactionMarker(std::string_view name) {
  return "[REDACTED:" + std::string(name) + "]";
}

ConfigIssues validateRedactionRules(const std::vector<RedactionRule>& rules,
                                    std::string_view path) {
  ConfigIssues issues;
  std::set<std::string, std::less<>> names;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const RedactionRule& rule = rules[i];
    std::string at = std::string(path) + "[" + std::to_string(i) + "]";
    auto add = [&](std::string_view field, std::string message) {
      issues.push_back({at + (field.empty() ? "" : "." + std::string(field)), std::move(message)});
    };
    bool nameOk = !rule.name.empty() && rule.name.size() <= kMaxRuleNameChars;
    for (char c : rule.name) nameOk = nameOk && isNameChar(c);
    if (!nameOk) {
      add("name", "expected a name of 1 to " + std::to_string(kMaxRuleNameChars) +
                      " characters from A-Z a-z 0-9 _ . - (it is shown as [REDACTED:<name>]), "
                      "got \"" +
                      rule.name + "\"");
    } else if (!names.insert(rule.name).second) {
      add("name", "\"" + rule.name + "\" is used by an earlier rule; give each rule its own name");
    }
    int given = !rule.value.empty() + !rule.env.empty() + !rule.pattern.empty();
    if (given != 1) {
      add("", "expected exactly one of value, env or pattern, got " + std::to_string(given));
      continue;
    }
    if (!rule.value.empty() && rule.value.size() < kMinSecretChars) {
      add("value", "expected a secret of at least " + std::to_string(kMinSecretChars) +
                       " characters (a shorter one would redact ordinary text)");
    }
    if (!rule.env.empty() && !isEnvName(rule.env)) {
      add("env", "expected an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got \"" +
                     rule.env + "\"");
    }
    if (!rule.pattern.empty()) {
      auto re = compileRedactionPattern(rule.pattern);
      if (!re->ok()) {
        add("pattern",
            "not a valid regular expression (RE2 syntax, docs/config.md): " + re->error());
      } else if (RE2::PartialMatch("", *re)) {
        add("pattern",
            "the pattern matches the empty string, so it would redact between "
            "every character; make it match at least one character");
      }
    }
  }
  return issues;
}

std::shared_ptr<const re2::RE2> compileRedactionPattern(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(64 << 20);  // a pattern is a config value, not untrusted: room to spare
  return std::make_shared<const re2::RE2>(pattern, options);
}

}  // namespace loom::middleware
