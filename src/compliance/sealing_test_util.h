// Shared by the sealing tests (sealed logs, snapshots, content, the whole-home grep): a scratch
// home, a fixed master key, byte searches over every file under a folder, and a few events.
// Test-only.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "loom/kernel/event.h"
#include "support/temp_dir.h"

namespace loom::compliance::sealing_test {

namespace fs = std::filesystem;

inline constexpr int64_t kT0 = 1'780'000'000'000;

using ScratchHome = loom::testing::TempDir;  // the one temporary folder of the tests

inline std::array<uint8_t, 32> testMasterKey() {
  std::array<uint8_t, 32> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(0xA0 + i);
  return k;
}

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every regular file under `dir` (recursively) that contains `needle`.
inline std::vector<std::string> filesContaining(const fs::path& dir, const std::string& needle) {
  std::vector<std::string> hits;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    if (readFile(e.path()).find(needle) != std::string::npos) hits.push_back(e.path().string());
  }
  return hits;
}

inline std::size_t fileCount(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

// The data of an execution's events, as a test writes them: a start, `steps` steps whose
// outputs carry `secret`, and a completion.
inline std::vector<kernel::Event> secretRun(const std::string& subject, const std::string& secret,
                                            int steps, bool complete = true) {
  std::vector<kernel::Event> events{
      kernel::executionStarted("wf", json::object{{"q", "input " + secret}}, subject, kT0)};
  for (int i = 0; i < steps; ++i) {
    events.push_back(kernel::stepCompleted(
        "step-" + std::to_string(i), "tool", "fetch",
        json::object{{"text", secret + " #" + std::to_string(i)}}, kT0 + i + 1));
  }
  if (complete)
    events.push_back(kernel::executionCompleted(json::value("done: " + secret), kT0 + 1000));
  return events;
}

}  // namespace loom::compliance::sealing_test
