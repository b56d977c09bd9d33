#include "loom/compliance/key_store.h"

#include <sodium.h>

#include "aead.h"
#include "loom/util/error.h"

namespace loom::compliance {

DataKey::~DataKey() { sodium_memzero(bytes_.data(), bytes_.size()); }

std::array<uint8_t, 32> parseMasterKey(const std::string& hex, const std::string& origin) {
  std::string_view text(hex);
  auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && isSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && isSpace(text.back())) text.remove_suffix(1);
  if (text.empty()) {
    throw ConfigError("the master key in " + origin +
                      " is empty; it must be 64 hex digits (32 bytes): generate one with `loom "
                      "keys new-master`");
  }
  std::array<uint8_t, 32> key{};
  if (!detail::fromHex(text, key.data(), key.size())) {
    // The text is secret (or a typo of it): say what is wrong, never what it is.
    throw ConfigError("the master key in " + origin + " is malformed: it must be exactly 64 " +
                      "hex digits (32 bytes), not " + std::to_string(text.size()) +
                      " characters of text; generate one with `loom keys new-master`");
  }
  return key;
}

std::string newMasterKeyHex() {
  detail::Key key = detail::randomKey();
  std::string hex = detail::toHex(key.data(), key.size());
  detail::wipe(key);
  return hex;
}

}  // namespace loom::compliance
