#include "loom/compliance/memory_key_store.h"

#include "aead.h"
#include "loom/util/error.h"
#include "util/utf8.h"

namespace loom::compliance {
namespace {

void requireSubject(const std::string& subject) {
  if (subject.empty()) throw InvalidArgumentError("a data subject must not be empty");
  requireUtf8(subject, "the data subject");
}

}  // namespace

MemoryKeyStore::~MemoryKeyStore() = default;  // each DataKey wipes itself

DataKey MemoryKeyStore::getOrCreate(const std::string& subject) {
  requireSubject(subject);
  std::lock_guard lock(mu_);
  auto it = keys_.find(subject);
  if (it == keys_.end()) {
    detail::Key bytes = detail::randomKey();
    it = keys_.emplace(subject, DataKey(detail::randomHex(16), bytes)).first;
    detail::wipe(bytes);
  }
  return it->second;
}

std::optional<DataKey> MemoryKeyStore::find(const std::string& subject,
                                            const std::string& keyId) const {
  std::lock_guard lock(mu_);
  auto it = keys_.find(subject);
  if (it == keys_.end() || it->second.id() != keyId) return std::nullopt;
  return it->second;
}

bool MemoryKeyStore::shred(const std::string& subject) {
  std::lock_guard lock(mu_);
  auto it = keys_.find(subject);
  if (it == keys_.end()) return false;
  keys_.erase(it);  // ~DataKey wipes the bytes
  tombstones_.insert(subject);
  return true;
}

bool MemoryKeyStore::wasShredded(const std::string& subject) const {
  std::lock_guard lock(mu_);
  return tombstones_.contains(subject);
}

std::vector<std::string> MemoryKeyStore::subjects() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(keys_.size());
  for (const auto& [subject, key] : keys_) out.push_back(subject);
  return out;
}

}  // namespace loom::compliance
