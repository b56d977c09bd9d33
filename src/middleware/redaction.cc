#include "loom/middleware/redaction.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdlib>

#include "loom/util/error.h"
#include "util/child_environment.h"

namespace loom::middleware {

RedactionMiddleware::RedactionMiddleware(const std::vector<RedactionRule>& rules, WarnSink onWarn) {
  ConfigIssues issues = validateRedactionRules(rules, "security.redact");
  std::vector<CompiledRule> literals;
  std::vector<CompiledRule> patterns;
  for (std::size_t i = 0; i < rules.size() && issues.empty(); ++i) {
    const RedactionRule& rule = rules[i];
    std::string at = "security.redact[" + std::to_string(i) + "]";
    CompiledRule compiled{redactionMarker(rule.name), rule.value, nullptr};
    if (!rule.env.empty()) {
      markSecretVariable(rule.env);  // no tool Loom starts inherits the secret
      const char* secret = std::getenv(rule.env.c_str());
      if (secret == nullptr || *secret == '\0') {
        warn(onWarn, at + ".env: environment variable " + rule.env +
                         " is not set; there is nothing to redact for rule '" + rule.name + "'");
        continue;
      }
      compiled.literal = secret;
      if (compiled.literal.size() < kMinSecretChars) {
        issues.push_back({at + ".env", "the value of " + rule.env + " has " +
                                           std::to_string(compiled.literal.size()) +
                                           " characters; a secret needs at least " +
                                           std::to_string(kMinSecretChars) +
                                           " (a shorter one would redact ordinary text)"});
        continue;
      }
    }
    if (!rule.pattern.empty()) {
      compiled.pattern = compileRedactionPattern(rule.pattern);  // validated above
      patterns.push_back(std::move(compiled));
    } else {
      literals.push_back(std::move(compiled));
    }
  }
  if (!issues.empty()) {
    throw ConfigError("invalid security.redact:\n" + formatIssues(issues));
  }
  // Longest literal first, so a secret that contains another is replaced whole.
  std::stable_sort(literals.begin(), literals.end(), [](const auto& a, const auto& b) {
    return a.literal.size() > b.literal.size();
  });
  rules_ = std::move(literals);
  for (auto& p : patterns) rules_.push_back(std::move(p));
}

json::value RedactionMiddleware::invoke(const effects::EffectContext& ctx, json::value input,
                                        const effects::Next& next) {
  try {
    return redact(next(ctx, std::move(input)));
  } catch (const Error& e) {
    std::string message = e.what();
    if (!redactText(message)) throw;
    // The server's Retry-After stays with the error (execution.retry waits for it).
    if (const auto* asked = dynamic_cast<const RetryAfterError*>(&e)) {
      throw RetryAfterError(message, asked->retryAfterMillis());
    }
    throw Error(e.code(), message);
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (!redactText(message)) throw;
    throw InternalError(message);
  }
}

json::value RedactionMiddleware::redact(json::value v) const {
  if (!rules_.empty()) redactInPlace(v);
  return v;
}

bool RedactionMiddleware::redactText(std::string& text) const {
  bool changed = false;
  for (const CompiledRule& rule : rules_) {
    if (rule.pattern) {
      // Markers hold no '\\' (rule names are [A-Za-z0-9_.-]), so the rewrite is literal.
      if (RE2::GlobalReplace(&text, *rule.pattern, rule.marker) > 0) changed = true;
      continue;
    }
    std::size_t pos = text.find(rule.literal);
    if (pos == std::string::npos) continue;
    std::string out;
    out.reserve(text.size());
    std::size_t from = 0;
    for (; pos != std::string::npos; pos = text.find(rule.literal, from)) {
      out.append(text, from, pos - from);
      out += rule.marker;
      from = pos + rule.literal.size();
    }
    out.append(text, from, std::string::npos);
    text = std::move(out);
    changed = true;
  }
  return changed;
}

void RedactionMiddleware::redactInPlace(json::value& v) const {
  switch (v.kind()) {
    case boost::json::kind::string: {
      std::string text(v.get_string());
      if (redactText(text)) v = text;
      return;
    }
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: {
      std::string text = json::toText(v);  // a secret may be all digits
      if (redactText(text)) v = text;
      return;
    }
    case boost::json::kind::array:
      for (auto& element : v.get_array()) redactInPlace(element);
      return;
    case boost::json::kind::object: {
      json::object& object = v.get_object();
      bool keyChanged = false;
      for (auto& member : object) {
        redactInPlace(member.value());
        std::string key(member.key());
        keyChanged = keyChanged || redactText(key);
      }
      if (!keyChanged) return;
      json::object rebuilt;
      for (auto& member : object) {
        std::string key(member.key());
        redactText(key);
        // Two keys redacted to the same text must not overwrite each other.
        std::string unique = key;
        for (int n = 2; rebuilt.contains(unique); ++n) unique = key + "#" + std::to_string(n);
        rebuilt.emplace(unique, std::move(member.value()));
      }
      v = std::move(rebuilt);
      return;
    }
    default:
      return;
  }
}

}  // namespace loom::middleware
