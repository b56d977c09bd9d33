// exportSubject (ADR 0140 D8 (b), docs/spec/export.md): the document's shape, and the round
// trip of claim-checked values (value / bytesBase64 / missing).
#include "loom/compliance/export.h"

#include <gtest/gtest.h>

#include "erase_journal.h"
#include "erase_test_util.h"
#include "support/temp_dir.h"

namespace loom::compliance {
namespace {

using testutil::addressOf;
using testutil::World;

class ExportTest : public ::testing::Test {
 protected:
  ExportSubjectOptions options() {
    return ExportSubjectOptions{w_.events, &w_.content, &w_.archive, &w_.snapshots, w_.clock};
  }
  json::object exportAlice() { return exportSubject(options(), "alice"); }
  // The claimChecked entry of `address`.
  json::object entry(const json::object& doc, const std::string& address) {
    for (const auto& e : doc.at("claimChecked").as_array()) {
      if (e.at("address") == address.c_str()) return e.as_object();
    }
    ADD_FAILURE() << "no claimChecked entry for " << address;
    return {};
  }
  World w_;
};

TEST_F(ExportTest, TopLevelIsVersionedAndNamesTheSubject) {
  w_.run("a1", "alice", {json::object{{"n", 1}}});
  auto doc = exportAlice();
  EXPECT_EQ(doc.at("format"), "loom.export/1");
  EXPECT_EQ(doc.at("subject"), "alice");
  EXPECT_EQ(doc.at("exportedAt"), formatTimestamp(w_.clock->nowMillis()).c_str());
  EXPECT_TRUE(doc.at("claimChecked").as_array().empty());
  std::vector<std::string> keys;
  for (const auto& kv : doc) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "subject", "exportedAt", "executions",
                                            "claimChecked"}));
}

TEST_F(ExportTest, ExportsEveryExecutionOfTheSubjectWithEventsAndFoldedState) {
  w_.run("a1", "alice", {json::object{{"n", 1}}});
  w_.run("a2", "alice", {json::object{{"n", 2}}});
  w_.archiveExecution("a2");
  w_.run("b1", "bob", {json::object{{"n", 3}}});
  auto doc = exportAlice();
  const auto& executions = doc.at("executions").as_array();
  ASSERT_EQ(executions.size(), 2u);
  const auto& a1 = executions[0].as_object();
  EXPECT_EQ(a1.at("id"), "a1");
  EXPECT_EQ(a1.at("source"), "live");
  EXPECT_EQ(a1.at("status"), "completed");
  EXPECT_EQ(a1.at("workflow"), "wf");
  EXPECT_EQ(a1.at("events"), json::value(json::array{kernel::toJson(w_.events.read("a1")[0]),
                                                     kernel::toJson(w_.events.read("a1")[1]),
                                                     kernel::toJson(w_.events.read("a1")[2])}));
  EXPECT_EQ(a1.at("state").at("steps").at("agent#turn:1:tool:0"),
            json::value(json::object{{"n", 1}}));
  EXPECT_EQ(a1.at("state").at("result"), 1);
  EXPECT_TRUE(a1.contains("agentState"));
  EXPECT_EQ(a1.at("agentState").at("agent").at("frames").as_array().size(), 1u);
  const auto& a2 = executions[1].as_object();
  EXPECT_EQ(a2.at("id"), "a2");
  EXPECT_EQ(a2.at("source"), "archive");
  EXPECT_EQ(a2.at("events").as_array().size(), 3u);
}

TEST_F(ExportTest, AWorkflowWithoutAgentLoopsHasNoAgentState) {
  w_.events.append("plain", 1,
                   {kernel::executionStarted("wf", nullptr, std::string("alice"), 0),
                    kernel::stepCompleted("step-1", "flow", "f", 1, 0)});
  auto doc = exportAlice();
  EXPECT_FALSE(doc.at("executions").at(0).as_object().contains("agentState"));
}

// The round trip: each offloaded value comes back as the data, not a ref.
TEST_F(ExportTest, ResolvesJsonBlobsToTheirValue) {
  json::value report = json::object{{"id", "r-3"}, {"rows", json::array{1, 2, 3}}};
  auto envelope = w_.offload(json::toText(report));
  w_.run("a1", "alice", {envelope});
  auto e = entry(exportAlice(), addressOf(envelope));
  EXPECT_EQ(e.at("value"), report);
  EXPECT_EQ(e.at("size"), static_cast<int64_t>(json::toText(report).size()));
  EXPECT_EQ(e.at("digest"), json::value(json::object{{"preview", "p"}}));
  EXPECT_FALSE(e.contains("bytesBase64"));
  EXPECT_FALSE(e.contains("missing"));
}

TEST_F(ExportTest, EachEntryReadsBackAsTheRecordsClaimCheckedBlob) {
  json::value report = json::object{{"id", "r-3"}};
  auto kept = w_.offload(json::toText(report));
  auto bytes = w_.offload(std::string("\x01\x02", 2));
  auto gone = w_.offload("\"reclaimed\"", /*retain=*/false);
  w_.run("a1", "alice", {kept, bytes, gone});
  ASSERT_TRUE(w_.content.remove(addressOf(gone)));
  json::object doc = exportAlice();
  for (const auto& e : doc.at("claimChecked").as_array()) {
    ClaimCheckedBlob blob = claimCheckedBlobFromJson(e);
    EXPECT_EQ(toJson(blob), e) << "an entry survives a read and a write";
    if (blob.address == addressOf(kept)) {
      EXPECT_EQ(blob.value, json::value(report));
    } else if (blob.address == addressOf(bytes)) {
      EXPECT_EQ(blob.bytesBase64, "AQI=");
    } else if (blob.address == addressOf(gone)) {
      EXPECT_TRUE(blob.missing);
    }
  }
  EXPECT_THROW(claimCheckedBlobFromJson(json::value("x")), InvalidArgumentError);
  EXPECT_THROW(
      claimCheckedBlobFromJson(json::parse(
          R"({"address": "a", "size": 1, "digest": null, "value": 1, "missing": true})", "t")),
      InvalidArgumentError);
  EXPECT_THROW(claimCheckedBlobFromJson(json::parse(R"({"size": 1, "value": 1})", "t")),
               InvalidArgumentError);
}

TEST_F(ExportTest, ResolvesNonJsonBlobsToBase64) {
  std::string bytes("\x01\x02\xff not json", 12);
  auto envelope = w_.offload(bytes);
  w_.run("a1", "alice", {envelope});
  auto e = entry(exportAlice(), addressOf(envelope));
  EXPECT_EQ(e.at("bytesBase64"), "AQL/IG5vdCBqc29u");
  EXPECT_FALSE(e.contains("value"));
}

TEST_F(ExportTest, MarksBlobsThatAreGoneAsMissing) {
  auto envelope = w_.offload("\"reclaimed\"", /*retain=*/false);
  w_.run("a1", "alice", {envelope});
  ASSERT_TRUE(w_.content.remove(addressOf(envelope)));
  auto e = entry(exportAlice(), addressOf(envelope));
  EXPECT_EQ(e.at("missing"), true);
  EXPECT_EQ(e.at("size"), 11);
  EXPECT_FALSE(e.contains("value"));
}

// Retention without archive removed the run's log: nothing cites alice's blob any more, but
// the store still holds it, and the ledger says she put it. It is exported: it is held on her.
TEST_F(ExportTest, ABlobTheSubjectPutThatNoRunCitesAnyMoreIsExported) {
  loom::testing::TempDir dir;
  BlobLedger ledger((dir.path() / "ledger.db").string());
  std::string held = w_.content.put("\"alice's page\"");
  ledger.add(std::string("alice"), held);
  std::string swept = w_.content.put("\"reclaimed since\"");
  ledger.add(std::string("alice"), swept);
  ASSERT_TRUE(w_.content.remove(swept));
  std::string bobs = w_.content.put("\"bob's\"");
  ledger.add(std::string("bob"), bobs);
  ExportSubjectOptions o = options();
  o.ledger = &ledger;
  json::object doc = exportSubject(o, "alice");
  ASSERT_EQ(doc.at("claimChecked").as_array().size(), 1u) << json::toText(doc);
  EXPECT_EQ(entry(doc, held).at("value"), "alice's page");
}

TEST_F(ExportTest, CoversNestedArchivedAndSnapshottedBlobsButNotOtherSubjects) {
  auto nested = w_.offload("\"nested\"");
  auto archived = w_.offload("\"archived\"");
  auto snapped = w_.offload("\"snapped\"");
  w_.run("a1", "alice", {json::object{{"page", nested}}});
  w_.run("a2", "alice", {archived});
  w_.archiveExecution("a2");
  w_.snapshot("a1", "alice", snapped);
  w_.run("b1", "bob", {w_.offload("\"bob's\"")});
  auto doc = exportAlice();
  EXPECT_EQ(doc.at("claimChecked").as_array().size(), 3u);
  EXPECT_EQ(entry(doc, addressOf(snapped)).at("value"), "snapped");
}

TEST_F(ExportTest, RefusesWhenBlobsAreCitedAndNoContentStoreIsWired) {
  w_.run("a1", "alice", {w_.offload("x")});
  auto o = options();
  o.content = nullptr;
  EXPECT_THROW(exportSubject(o, "alice"), FailedPreconditionError);
}

TEST_F(ExportTest, AnUnknownSubjectExportsNothing) {
  auto doc = exportSubject(options(), "nobody");
  EXPECT_TRUE(doc.at("executions").as_array().empty());
  EXPECT_THROW(exportSubject(options(), ""), InvalidArgumentError);
}

// An erasure stopped after its intent (killed, or its shred's flush kept busy): the export
// refuses until it is finished instead of showing less than is held.
TEST_F(ExportTest, AnUnfinishedErasureOfTheSubjectStopsTheExportUntilItIsFinished) {
  w_.run("a1", "alice", {w_.offload("alice's report")});
  json::object intent{{"subject", "alice"},
                      {"addresses", json::array{}},
                      {"kept", json::array{}},
                      {"touchCutoff", 1}};
  int64_t seq = detail::journal(w_.events, detail::kIntendedType, intent, 1);
  try {
    exportAlice();
    ADD_FAILURE() << "an export beside an unfinished erasure";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("`loom erase alice` again"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(exportSubject(options(), "bob")) << "another subject's export goes on";
  detail::journal(
      w_.events, detail::kDeletedType,
      json::object{{"subject", "alice"}, {"deleted", 0}, {"retained", 0}, {"intent", seq}}, 2);
  EXPECT_NO_THROW(exportAlice());
}

}  // namespace
}  // namespace loom::compliance
