#include "sweep/content_walker.h"

#include <gtest/gtest.h>

#include "content/claim_check_envelope.h"
#include "loom/effects/taint.h"

namespace loom::sweep {
namespace {

const std::string kA(64, 'a'), kB(64, 'b'), kC(64, 'c');

json::value envelope(const std::string& address, bool retain) {
  return content::toJson(content::ClaimCheckEnvelope{address, 10, std::nullopt, retain});
}

kernel::Event completed(json::value output) {
  return kernel::stepCompleted("a#turn:1:tool:0", "tool", "t", std::move(output), 0);
}

TEST(ContentWalkerTest, FindsEveryRefAnywhere) {
  json::value v{{"x", envelope(kA, false)},
                {"list", json::array{json::object{{"deep", {{"__loomContent", kB}}}}}},
                {"notRef", {{"__loomContent", "short"}}},
                {"extra", {{"__loomContent", kC}, {"more", 1}}}};
  std::vector<std::string> seen;
  visitCitedAddresses(v, [&](std::string_view a) { seen.emplace_back(a); });
  EXPECT_EQ(seen, (std::vector<std::string>{kA, kB}));
}

TEST(ContentWalkerTest, RetainIsHonouredOnlyAtTheTopThroughOneTaintWrapper) {
  EXPECT_EQ(retainRootsOf(completed(envelope(kA, true))), std::vector<std::string>{kA});
  EXPECT_EQ(retainRootsOf(completed(effects::tainted(envelope(kA, true), "mcp:x"))),
            std::vector<std::string>{kA});
  EXPECT_TRUE(retainRootsOf(completed(envelope(kA, false))).empty());
  EXPECT_TRUE(retainRootsOf(completed(json::value{{"nested", envelope(kA, true)}})).empty())
      << "a nested look-alike is not load-bearing";
  EXPECT_TRUE(
      retainRootsOf(completed(effects::tainted(effects::tainted(envelope(kA, true), "a"), "b")))
          .empty())
      << "only one wrapper is looked through";
  json::value extra = envelope(kA, true);
  extra.as_object()["evil"] = 1;
  EXPECT_TRUE(retainRootsOf(completed(extra)).empty()) << "a malformed envelope is not trusted";
  json::value badSize = envelope(kA, true);
  badSize.as_object()["size"] = "10";
  EXPECT_TRUE(retainRootsOf(completed(badSize)).empty());
  auto failed = kernel::executionCompleted(envelope(kA, true), 0);
  EXPECT_TRUE(retainRootsOf(failed).empty()) << "only STEP_COMPLETED outputs";
}

}  // namespace
}  // namespace loom::sweep
