#include "loom/compliance/subject.h"

#include "compliance/aead.h"
#include "loom/util/error.h"
#include "util/utf8.h"

namespace loom::compliance {

std::string shownSubject(std::string_view subject) { return escapeInvalidUtf8(subject); }

void putSubject(json::object& data, std::string_view subject) {
  data["subject"] = shownSubject(subject);
  if (!isValidUtf8(subject)) data["subjectHex"] = detail::toHex(subject);
}

std::string eraseCommand(std::string_view subject) {
  if (isValidUtf8(subject)) return "loom erase " + std::string(subject);
  return "loom erase --subject-hex " + detail::toHex(subject);
}

std::string subjectOf(const json::object& data) {
  if (const json::value* hex = data.if_contains("subjectHex")) {
    if (!hex->is_string()) throw InvalidArgumentError("'subjectHex' is not a string");
    return subjectFromHex(hex->get_string());
  }
  return std::string(json::requireString(data, "subject"));
}

std::string subjectFromHex(std::string_view hex) {
  std::string bytes(hex.size() / 2, '\0');
  if (hex.empty() || hex.size() % 2 != 0 ||
      !detail::fromHex(hex, reinterpret_cast<uint8_t*>(bytes.data()), bytes.size())) {
    throw InvalidArgumentError("the subject's hex '" + std::string(hex.substr(0, 80)) +
                               "' is not hex: give each of the subject's bytes as two hex digits "
                               "(ff for the byte 0xFF)");
  }
  return bytes;
}

}  // namespace loom::compliance
