// The EventStore conformance suite: the contract written in include/loom/kernel/event_store.h
// as tests that every implementation passes (event_store_conformance.cc). An implementation
// joins with one line: its factory in the list of event_store_implementations.cc. Also the
// small helpers the implementation-specific tests beside it share (scratch directories,
// events with fixed timestamps, event comparison).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "loom/kernel/event_store.h"
#include "loom/util/clock.h"
#include "support/temp_dir.h"

namespace loom::kernel::conformance {

using loom::testing::TempDir;

struct EventStoreFactory {
  std::string name;  // test name suffix: letters, digits and underscores
  // Makes an empty store whose leases go by `clock`. It may keep files under `scratchDir`,
  // which is fresh for each test and removed after the store is destroyed.
  std::function<std::unique_ptr<EventStore>(const std::filesystem::path& scratchDir,
                                            std::shared_ptr<const Clock> clock)>
      make;
  // The store keeps another form than it reads back (a sealing store): its sizes are those of
  // the stored form, which the suite cannot see (that store's own tests check them).
  bool storesAnotherForm = false;
  // Why the implementation cannot run here (a server it needs is not configured); unset or
  // "": it can. The suite then skips with that message.
  std::function<std::string()> unavailable;
};

// Gives each TEST_P of the suite a fresh, empty store of the parameter's implementation.
class EventStoreConformance : public ::testing::TestWithParam<EventStoreFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      std::string why = GetParam().unavailable();
      if (!why.empty()) GTEST_SKIP() << why;
    }
    store_ = GetParam().make(scratch_.path(), clock_);
  }
  void TearDown() override { store_.reset(); }
  EventStore& store() { return *store_; }
  // The store's lease clock: it moves only when a test advances it.
  const ManualClock& clock() const { return *clock_; }

 private:
  TempDir scratch_;  // declared first: outlives the store
  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<EventStore> store_;
};

// Prints a factory as its name in test output.
inline void PrintTo(const EventStoreFactory& factory, std::ostream* os) { *os << factory.name; }

// Test names from factory names ("Memory", "SqliteFull", ...).
std::string factoryName(const ::testing::TestParamInfo<EventStoreFactory>& info);

// Timestamps of test events: kT0 + the given offset in ms.
inline constexpr int64_t kT0 = 1'780'000'000'000;

Event started(const std::string& workflow = "wf",
              const std::optional<std::string>& subject = std::nullopt,
              json::value input = json::object{{"q", "hello"}}, int64_t at = kT0);
Event step(const std::string& stepId, json::value output = json::value("ok"), int64_t at = kT0);

// Asserts that two events are equal in every field (seq, type, at, data).
void expectSameEvent(const Event& expected, const Event& actual);
void expectSameEvents(const std::vector<Event>& expected, const std::vector<Event>& actual);
// Asserts seq 1..n with no gap and no duplicate.
void expectContiguous(const std::vector<Event>& events);

}  // namespace loom::kernel::conformance

namespace loom::kernel {
// gtest prints statuses by name (found by argument-dependent lookup).
inline void PrintTo(ExecutionStatus status, std::ostream* os) { *os << statusName(status); }
}  // namespace loom::kernel
