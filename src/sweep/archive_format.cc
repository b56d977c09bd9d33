#include "archive_format.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "util/io_error.h"

namespace loom::sweep::format {
namespace {

void initSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) throw InternalError("libsodium could not be initialised");
  });
}

}  // namespace

void putU32(char* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void putU64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t getU32(const char* in) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

uint64_t getU64(const char* in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

Checksum::Checksum() {
  initSodium();
  crypto_generichash_init(&state_, nullptr, 0, kChecksumBytes);
}

void Checksum::update(std::string_view bytes) {
  crypto_generichash_update(&state_, reinterpret_cast<const unsigned char*>(bytes.data()),
                            bytes.size());
}

std::array<unsigned char, kChecksumBytes> Checksum::digest() {
  std::array<unsigned char, kChecksumBytes> out{};
  crypto_generichash_final(&state_, out.data(), out.size());
  return out;
}

std::string Checksum::hex() {
  auto d = digest();
  return toHex(d.data(), d.size());
}

std::string toHex(const unsigned char* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 15]);
  }
  return out;
}

json::object infoToJson(const kernel::ExecutionInfo& info) {
  const auto& s = info.sizes;
  return json::object{
      {"id", info.id},
      {"workflow", info.workflow},
      {"subject", info.subject ? json::value(*info.subject) : json::value()},
      {"status", kernel::statusName(info.status)},
      {"startedAt", formatTimestamp(info.startedAtMillis)},
      {"endedAt",
       info.endedAtMillis ? json::value(formatTimestamp(*info.endedAtMillis)) : json::value()},
      {"nextSeq", info.nextSeq},
      {"steps", info.steps},
      {"logBytes", info.logBytes},
      {"stateBytes", info.stateBytes},
      {"sizes", json::object{{"headerBytes", s.headerBytes},
                             {"stepsBytes", s.stepsBytes},
                             {"stepsCount", s.stepsCount},
                             {"signalsBytes", s.signalsBytes},
                             {"signalsCount", s.signalsCount},
                             {"inputBytes", s.inputBytes},
                             {"resultBytes", s.resultBytes}}}};
}

kernel::ExecutionInfo infoFromJson(const json::object& o) {
  kernel::ExecutionInfo info;
  info.id = json::requireString(o, "id");
  info.workflow = json::requireString(o, "workflow");
  info.subject = json::optionalString(o, "subject");
  std::string status(json::requireString(o, "status"));
  auto parsed = kernel::statusFromName(status);
  if (!parsed) throw InvalidArgumentError("unknown status '" + status + "'");
  info.status = *parsed;
  info.startedAtMillis = parseTimestamp(std::string(json::requireString(o, "startedAt")));
  if (auto ended = json::optionalString(o, "endedAt")) info.endedAtMillis = parseTimestamp(*ended);
  info.nextSeq = json::requireInt(o, "nextSeq");
  info.steps = json::requireInt(o, "steps");
  info.logBytes = json::requireInt(o, "logBytes");
  info.stateBytes = json::requireInt(o, "stateBytes");
  const auto& s = json::requireObject(o, "sizes");
  info.sizes.headerBytes = json::requireInt(s, "headerBytes");
  info.sizes.stepsBytes = json::requireInt(s, "stepsBytes");
  info.sizes.stepsCount = json::requireInt(s, "stepsCount");
  info.sizes.signalsBytes = json::requireInt(s, "signalsBytes");
  info.sizes.signalsCount = json::requireInt(s, "signalsCount");
  info.sizes.inputBytes = json::requireInt(s, "inputBytes");
  info.sizes.resultBytes = json::requireInt(s, "resultBytes");
  return info;
}

}  // namespace loom::sweep::format
