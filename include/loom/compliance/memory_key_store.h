// The in-memory KeyStore: data keys live in process memory only, so a process exit shreds
// everything. For tests, benchmarks and embedded runs whose logs do not outlive the process.
// No master key: nothing is persisted, so there is nothing to wrap. Keys and tombstones are
// held under one mutex; key bytes are wiped on shred and on destruction. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "loom/compliance/key_store.h"

namespace loom::compliance {

class MemoryKeyStore : public KeyStore {
 public:
  MemoryKeyStore() = default;
  ~MemoryKeyStore() override;
  MemoryKeyStore(const MemoryKeyStore&) = delete;
  MemoryKeyStore& operator=(const MemoryKeyStore&) = delete;

  // KeyStore; see key_store.h for each contract.
  DataKey getOrCreate(const std::string& subject) override;
  std::optional<DataKey> find(const std::string& subject,
                              const std::string& keyId) const override;
  bool shred(const std::string& subject) override;
  bool wasShredded(const std::string& subject) const override;
  std::vector<std::string> subjects() const override;

 private:
  mutable std::mutex mu_;
  std::map<std::string, DataKey> keys_;   // GUARDED_BY(mu_); by subject
  std::set<std::string> tombstones_;      // GUARDED_BY(mu_)
};

}  // namespace loom::compliance
