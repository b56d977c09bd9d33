// Helpers shared by the archive and retention tests: a scratch folder, executions with fixed
// timestamps written through a MemoryEventStore (so their metadata is what a store computes),
// and byte surgery on files.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "loom/kernel/event_store.h"
#include "support/temp_dir.h"

namespace loom::sweep::testutil {

using loom::testing::TempDir;

namespace fs = std::filesystem;

inline constexpr int64_t kT0 = 1'780'000'000'000;

// An execution that starts at `startAt` and, unless `end` is empty ("completed", "failed" or
// "parked"), ends so at `endAt`, with `steps` steps whose outputs are `output(i)`.
inline void writeExecution(kernel::EventStore& store, const std::string& id, int64_t startAt,
                           const std::string& end, int64_t endAt, int steps,
                           const std::function<json::value(int)>& output) {
  std::vector<kernel::Event> events{
      kernel::executionStarted("wf", json::object{{"id", id}}, "subject-" + id, startAt)};
  for (int i = 0; i < steps; ++i) {
    events.push_back(kernel::stepCompleted("step-" + std::to_string(i), "tool", "fetch", output(i),
                                           startAt + i + 1));
  }
  if (end == "completed") events.push_back(kernel::executionCompleted(json::value(steps), endAt));
  if (end == "failed") events.push_back(kernel::executionFailed("internal", "boom", endAt));
  if (end == "parked") events.push_back(kernel::executionParked("signal", "go", "", endAt));
  store.append(id, 1, std::move(events));
}

inline std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::vector<fs::path> filesIn(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

}  // namespace loom::sweep::testutil
