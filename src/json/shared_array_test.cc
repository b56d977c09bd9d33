#include "loom/json/shared_array.h"

#include <gtest/gtest.h>

#include <thread>

namespace loom::json {
namespace {

TEST(SharedArray, ACopySeesTheValuesOfWhenItWasMadeWhateverIsAppendedLater) {
  SharedArray a;
  for (int i = 0; i < 100; ++i) a.push_back(i);
  SharedArray view = a;
  for (int i = 100; i < 300; ++i) a.push_back(i);
  ASSERT_EQ(view.size(), 100u);
  ASSERT_EQ(a.size(), 300u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(view[i], i);
  for (int i = 0; i < 300; ++i) EXPECT_EQ(a[i], i);
}

TEST(SharedArray, AppendingToACopyNeverChangesWhatTheOriginalOrOtherCopiesSee) {
  SharedArray a;
  for (int i = 0; i < 10; ++i) a.push_back(i);
  SharedArray b = a;
  SharedArray c = a;
  a.push_back("a");  // claims slot 10 in the shared storage
  b.push_back("b");  // slot 10 is taken: b takes storage of its own
  c.push_back("c");
  EXPECT_EQ(a[10], "a");
  EXPECT_EQ(b[10], "b");
  EXPECT_EQ(c[10], "c");
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(b[i], i);
    EXPECT_EQ(c[i], i);
  }
}

TEST(SharedArray, CopiesAtAChunkBoundaryGrowIndependently) {
  SharedArray a;
  for (int i = 0; i < 64; ++i) a.push_back(i);
  SharedArray b = a;
  a.push_back("a");
  b.push_back("b");
  EXPECT_EQ(a[64], "a");
  EXPECT_EQ(b[64], "b");
  EXPECT_EQ(a.size(), 65u);
}

TEST(SharedArray, ConvertsToAndFromJsonArraysAndIterates) {
  SharedArray a(array{1, "two", object{{"three", 3}}});
  EXPECT_EQ(a.toArray(), (array{1, "two", object{{"three", 3}}}));
  EXPECT_EQ(a.slice(1, 2), (array{"two"}));
  EXPECT_EQ(a.back().at("three"), 3);
  int n = 0;
  for (const auto& v : a) n += v.is_int64() ? 1 : 0;
  EXPECT_EQ(n, 1);
  EXPECT_EQ(std::distance(a.begin(), a.end()), 3);
  EXPECT_TRUE(SharedArray().empty());
}

// A copy lent to another thread is read while the owner keeps appending (the agent loop lends
// the transcript to a model call that a timeout may abandon while the run goes on).
TEST(SharedArray, ACopyIsReadOnAnotherThreadWhileTheOwnerAppends) {
  SharedArray a;
  for (int i = 0; i < 1000; ++i) a.push_back(i);
  SharedArray view = a;
  std::thread reader([view] {
    for (int round = 0; round < 50; ++round) {
      int64_t sum = 0;
      for (const auto& v : view) sum += v.as_int64();
      ASSERT_EQ(sum, 999 * 1000 / 2);
    }
  });
  for (int i = 1000; i < 20000; ++i) a.push_back(i);
  reader.join();
  EXPECT_EQ(a[19999], 19999);
}

}  // namespace
}  // namespace loom::json
