// KeyStore SPI: one random 256-bit data key per data subject, the root of crypto-shredding.
// Keys are stored wrapped (XChaCha20-Poly1305) under a master key that never sits beside the
// data (security.keys names a file or an environment variable). shred destroys a subject's
// key irrecoverably; everything sealed under it becomes unreadable, and readers report it as
// erased. A subject may get a new key after a shred (new data), under a new key id: what was
// sealed under the old id stays erased.
//
// Contract common to every implementation (tests/conformance/key_store_conformance.cc):
// - Thread-safe; a persistent store may be shared by several processes.
// - getOrCreate is idempotent: concurrent first calls for one subject agree on one key.
// - A key's bytes are returned in a DataKey that wipes them (sodium_memzero) when destroyed.
// - shred is durable when it returns; a second shred returns false and changes nothing.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::compliance {

// The system key's subject: security.crypto seals executions without a subject under it.
inline constexpr std::string_view kSystemSubject = "__loom_system__";

class DataKey {
 public:
  DataKey() = default;
  DataKey(std::string id, const std::array<uint8_t, 32>& bytes)
      : id_(std::move(id)), bytes_(bytes) {}
  ~DataKey();  // wipes the bytes (sodium_memzero)
  DataKey(const DataKey&) = default;
  DataKey& operator=(const DataKey&) = default;

  // Identifies this key among the subject's keys (new after every shred); recorded beside
  // what it seals so a reader can tell "erased" (no such key) from "corrupt" (AEAD failure).
  const std::string& id() const { return id_; }
  const std::array<uint8_t, 32>& bytes() const { return bytes_; }

 private:
  std::string id_;
  std::array<uint8_t, 32> bytes_{};
};

class KeyStore {
 public:
  virtual ~KeyStore() = default;

  // The subject's current key, created (random, wrapped, durable) on first use. Throws
  // InvalidArgumentError for an empty subject.
  virtual DataKey getOrCreate(const std::string& subject) = 0;

  // The subject's key with id `keyId`; nullopt when it was shredded or never existed.
  virtual std::optional<DataKey> find(const std::string& subject,
                                      const std::string& keyId) const = 0;

  // Destroys every key of the subject (rows deleted and overwritten: SQLite secure_delete).
  // Returns true when a key existed.
  virtual bool shred(const std::string& subject) = 0;

  // True when the subject had a key that was shredded (a tombstone is kept, naming no key).
  virtual bool wasShredded(const std::string& subject) const = 0;

  // Subjects that currently have a key.
  virtual std::vector<std::string> subjects() const = 0;
};

// The master key: 32 bytes from 64 hex digits (surrounding whitespace ignored). Throws
// ConfigError naming `origin` (the file or the environment variable) when it is missing or
// malformed; the message never echoes the text. The caller wipes the result (sodium_memzero)
// once the key store holds its own copy.
std::array<uint8_t, 32> parseMasterKey(const std::string& hex, const std::string& origin);
// A fresh random master key as 64 hex digits (`loom keys new-master`).
std::string newMasterKeyHex();

}  // namespace loom::compliance
