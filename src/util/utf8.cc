#include "util/utf8.h"

#include <cstdint>
#include <string>

#include "loom/util/error.h"

namespace loom {
namespace {

// The offset of the first byte that is not part of a well-formed sequence; npos when none.
std::size_t firstInvalid(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  for (std::size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    } else {
      return i;
    }
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace

std::string escapeInvalidUtf8(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  while (!text.empty()) {
    std::size_t bad = firstInvalid(text);
    out.append(text.substr(0, bad));
    if (bad == std::string_view::npos) break;
    auto byte = static_cast<unsigned char>(text[bad]);
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
    text.remove_prefix(bad + 1);
  }
  return out;
}

bool isValidUtf8(std::string_view text) { return firstInvalid(text) == std::string_view::npos; }

void requireUtf8(std::string_view text, std::string_view what) {
  std::size_t at = firstInvalid(text);
  if (at == std::string_view::npos) return;
  throw InvalidArgumentError(std::string(what) + " is not valid UTF-8 (byte " + std::to_string(at) +
                             "): use a name in UTF-8");
}

}  // namespace loom
