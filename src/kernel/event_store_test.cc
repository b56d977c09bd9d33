// Helpers over the EventStore SPI (event_store.h): paging through executions.
#include "loom/kernel/event_store.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loom/kernel/memory_event_store.h"

namespace loom::kernel {
namespace {

void start(EventStore& store, const std::string& id, std::optional<std::string> subject = {}) {
  store.append(id, 1, {executionStarted("w", json::object{}, subject, 1)});
}

std::vector<std::string> idsVisited(const EventStore& store, ExecutionFilter filter) {
  std::vector<std::string> ids;
  forEachExecution(store, filter, [&](const ExecutionInfo& info) { ids.push_back(info.id); });
  return ids;
}

TEST(ForEachExecution, VisitsEveryMatchingExecutionOnceInIdOrderAcrossPages) {
  MemoryEventStore store;
  for (const char* id : {"e3", "e1", "e5", "e2", "e4"}) start(store, id, "ann");
  start(store, "other", "bob");
  ExecutionFilter filter;
  filter.subject = "ann";
  filter.limit = 2;  // pages of 2, 2 and 1
  EXPECT_EQ(idsVisited(store, filter), (std::vector<std::string>{"e1", "e2", "e3", "e4", "e5"}));
  filter.limit = 5;  // a full last page is followed by an empty one
  EXPECT_EQ(idsVisited(store, filter).size(), 5u);
  filter.limit = 0;  // the default page
  filter.afterId = "e3";
  EXPECT_EQ(idsVisited(store, filter), (std::vector<std::string>{"e4", "e5"}));
}

TEST(ForEachExecution, AnEmptyStoreVisitsNothing) {
  MemoryEventStore store;
  EXPECT_TRUE(idsVisited(store, {}).empty());
}

}  // namespace
}  // namespace loom::kernel
