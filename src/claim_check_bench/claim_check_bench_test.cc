// Sizes are deterministic (fixed seed), so the record's table is checked as a test at 50
// turns; `loom bench claim-check` prints the full table with wall times.
#include "claim_check_bench/claim_check_bench.h"

#include <gtest/gtest.h>

namespace loom::claim_check_bench {
namespace {

TEST(ClaimCheckBenchTest, FiftyTurnsBeatTheRecordInFullModeAndDeltaLogStaysNearState) {
  ClaimCheckBenchOptions o;
  o.turns = {50};
  o.stores = {"memory"};
  auto rows = runClaimCheckBench(o);
  ASSERT_EQ(rows.size(), 6u);
  const std::map<std::string, std::pair<double, double>> record{
      {"off", {297.8e3, 4043e3}}, {"on", {70.8e3, 953e3}}, {"on-no-preview", {43.0e3, 551e3}}};
  for (const auto& r : rows) {
    if (r.journal == "full") {
      EXPECT_LE(r.stateBytes, record.at(r.claimCheck).first) << r.claimCheck;
      EXPECT_LE(r.logBytes, record.at(r.claimCheck).second) << r.claimCheck;
    }
    if (r.journal == "delta" && r.claimCheck != "off") {
      EXPECT_LE(r.logBytes, 2 * r.stateBytes) << r.claimCheck;
    }
  }
  std::string table = formatClaimCheckTable(rows);
  EXPECT_NE(table.find("| 50 | on | full | memory |"), std::string::npos) << table;
  EXPECT_EQ(toJson(rows).as_array().size(), 6u);
  std::cout << table;
}

}  // namespace
}  // namespace loom::claim_check_bench
