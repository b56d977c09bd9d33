// The ready-made middleware a loom.toml can name: one factory per `kind` of an
// [[execution.effectMiddleware]] entry (retry, timeout), as Envoy's filter factories. Each
// middleware owns its factory beside its config (retry_config.cc, timeout_config.cc): the entry
// options it takes, with their types, defaults and ranges, and how it builds itself from
// checked values. The app's option table turns the options into rows of docs/config.md and
// the loom.toml loader calls build; adding a ready-made middleware is adding a factory to
// readyMadeMiddleware(). Thread-safety: the table is built once and read-only.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "loom/effects/middleware.h"
#include "loom/middleware/config_issue.h"

namespace loom::middleware {

// A value of one option as the loader read it (its type already checked).
using OptionValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;
// The options given in one entry, by key.
using OptionEntry = std::vector<std::pair<std::string, OptionValue>>;

struct EntryOption {
  enum class Type { kInteger, kNumber, kStringList };
  std::string key;
  Type type = Type::kInteger;
  std::string defaultText;    // as docs/config.md shows it
  std::optional<double> min;  // range of an integer or number
  std::optional<double> max;
  std::vector<std::string> allowed;  // the accepted values of a string list
  std::string description;
};

struct MiddlewareFactory {
  std::string_view kind;
  std::vector<EntryOption> options;
  // Builds the middleware from an entry whose keys, types and ranges were checked against
  // `options`; returns null after adding to `issues` what the options cannot check alone
  // (retry: maxDelayMs below initialDelayMs). `entryPath` is "execution.effectMiddleware[i]".
  std::function<std::shared_ptr<effects::Middleware>(
      const OptionEntry& entry, const std::string& entryPath, ConfigIssues& issues)>
      build;
};

// Every ready-made middleware, in the order docs/config.md lists them.
const std::vector<MiddlewareFactory>& readyMadeMiddleware();
// The factory of `kind`, nullptr when there is none.
const MiddlewareFactory* findMiddlewareFactory(std::string_view kind);

// `value` as TOML-ish text: "full" quoted (with \" and \\ escaped), numbers plain (the
// shortest text that reads back), lists in brackets. What docs/config.md, `loom config check`
// and each middleware's describe() show.
std::string optionValueText(const OptionValue& value);

// Reading checked values (the loader checked the type).
int64_t optionInteger(const OptionValue& value);
double optionNumber(const OptionValue& value);  // an integer or a floating-point number

// The factories of the retry and timeout middleware (retry_config.cc, timeout_config.cc).
MiddlewareFactory retryFactory();
MiddlewareFactory timeoutFactory();

}  // namespace loom::middleware
