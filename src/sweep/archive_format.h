// The byte layout of an archive segment (docs/spec/archive-segment.md) and the small tools the
// writer and reader share: little-endian integers, the BLAKE2b checksum (libsodium's
// generichash), file descriptors that close themselves, whole-buffer I/O with errors naming the
// file, and the JSON form of ExecutionInfo in the index. Internal to the sweep module.
// Thread-safety: pure functions, and objects used by one thread.
#pragma once

#include <sodium.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "loom/json/json.h"
#include "loom/kernel/execution_info.h"
#include "util/unique_fd.h"

namespace loom::sweep::format {

// Header: magic (8), version u32, reserved u32 (0), created-at i64 ms, execution count u64.
inline constexpr std::string_view kMagic{"LOOMARCH", 8};
inline constexpr std::size_t kHeaderBytes = 32;
// Footer: index offset u64, index length u64, checksum (32) over header + index, magic (8).
inline constexpr std::string_view kFooterMagic{"LOOMAEND", 8};
inline constexpr std::size_t kChecksumBytes = 32;
inline constexpr std::size_t kFooterBytes = 16 + kChecksumBytes + 8;

void putU32(char* out, uint32_t v);
void putU64(char* out, uint64_t v);
uint32_t getU32(const char* in);
uint64_t getU64(const char* in);

// BLAKE2b-256 over bytes fed in pieces.
class Checksum {
 public:
  Checksum();
  void update(std::string_view bytes);
  std::array<unsigned char, kChecksumBytes> digest();
  std::string hex();  // 64 lower-case hex digits of digest()

 private:
  crypto_generichash_state state_;
};

std::string toHex(const unsigned char* bytes, std::size_t n);

using Fd = loom::UniqueFd;  // util/unique_fd.h

// ExecutionInfo as the index keeps it (every field, timestamps as RFC 3339 text).
json::object infoToJson(const kernel::ExecutionInfo& info);
// Throws InvalidArgumentError naming the field on any defect.
kernel::ExecutionInfo infoFromJson(const json::object& o);

}  // namespace loom::sweep::format
