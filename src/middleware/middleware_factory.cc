#include "loom/middleware/middleware_factory.h"

#include <charconv>

namespace loom::middleware {
namespace {

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string numberText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace

std::string optionValueText(const OptionValue& value) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return numberText(d); }
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const std::vector<std::string>& list) const {
      std::string out = "[";
      for (const auto& s : list) out += (out.size() > 1 ? ", " : "") + quoted(s);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, value);
}

const std::vector<MiddlewareFactory>& readyMadeMiddleware() {
  static const std::vector<MiddlewareFactory> table = {retryFactory(), timeoutFactory()};
  return table;
}

const MiddlewareFactory* findMiddlewareFactory(std::string_view kind) {
  for (const auto& factory : readyMadeMiddleware()) {
    if (factory.kind == kind) return &factory;
  }
  return nullptr;
}

int64_t optionInteger(const OptionValue& value) { return std::get<int64_t>(value); }

double optionNumber(const OptionValue& value) {
  return std::holds_alternative<int64_t>(value) ? static_cast<double>(std::get<int64_t>(value))
                                                : std::get<double>(value);
}

}  // namespace loom::middleware
