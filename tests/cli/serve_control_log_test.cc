// The control log under a busy inspector, with the real binary: every blob read through
// `loom serve` appends a BLOB_READ event, dated; a home whose control log is mostly such events
// (10,000 of them) still lists its runs, and the server's memory does not grow with the reads.
#include <sys/types.h>

#include <fstream>
#include <sstream>

#include "serve_fixture.h"
#include "support/sanitizer.h"

namespace loom::testing {
namespace {

constexpr int kMeasuredRounds = kSanitized ? 200 : 2'000;

class ServeControlLog : public ServeCli {
 protected:
  // The server's resident memory, in KiB (VmRSS of /proc/PID/status).
  int64_t serverRssKiB() {
    std::ifstream status("/proc/" + std::to_string(server_->pid()) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
    }
    return -1;
  }
  std::string blobAddress() {
    auto [status, timeline] = get("/api/v1/executions/ag/timeline");
    for (const auto& item : timeline.at("items").as_array()) {
      if (item.at("kind") != "turn") continue;
      for (const auto& tool : item.at("tools").as_array()) {
        if (tool.at("envelope").is_object()) {
          return std::string(tool.at("envelope").at("address").as_string());
        }
      }
    }
    return "";
  }
};

TEST_F(ServeControlLog, BlobReadsAreDatedAndNeitherListingsNorMemoryGrowWithThem) {
  writeAgentApp(dir_);
  ASSERT_EQ(0, loom({"run", dir_ / "agent.toml", "--id", "ag"}).exitCode);
  // 10,000 blob reads of an earlier server, as an older build wrote them (undated).
  std::string sql = dir_ / "fill.sql";
  {
    std::ofstream out(sql);
    out << "BEGIN;\n";
    for (int i = 1; i <= 10'000; ++i) {
      out << "INSERT INTO control (seq, body) VALUES (" << i << ", '{\"seq\":" << i
          << ",\"type\":\"BLOB_READ\",\"at\":\"1970-01-01T00:00:00.000Z\",\"execution\":\"ag\"}');\n";
    }
    out << "COMMIT;\n";
  }
  ASSERT_EQ(0, std::system(("sqlite3 '" + home() + "/loom.db' < '" + sql + "'").c_str()));
  serve();
  std::string address = blobAddress();
  ASSERT_FALSE(address.empty());
  auto readAndList = [&](int times) {
    for (int i = 0; i < times; ++i) {
      auto [blobStatus, blob] = get("/api/v1/executions/ag/blobs/" + address);
      ASSERT_EQ(200, blobStatus) << json::toText(blob);
      auto [listStatus, list] = get("/api/v1/executions");
      ASSERT_EQ(200, listStatus);
    }
  };
  readAndList(500);  // every server thread and cache warmed up
  int64_t before = serverRssKiB();
  readAndList(kMeasuredRounds);
  int64_t after = serverRssKiB();
  // Reading the whole control log per request grew the server with every read. (Under the
  // sanitizers, freed memory is held in quarantine: the server's size says nothing there.)
  if (!kSanitized) {
    EXPECT_LT(after - before, 2 * 1024) << "VmRSS " << before << " KiB -> " << after << " KiB";
  }

  Outcome log = runLoom({"--home", home(), "ls", "--json"}, dir_);
  EXPECT_EQ(0, log.exitCode) << log.err;
  std::string dated = dir_ / "dated.txt";
  ASSERT_EQ(0, std::system(("sqlite3 '" + home() +
                            "/loom.db' \"SELECT count(*) FROM control WHERE seq > 10000 AND "
                            "json_extract(body, '$.at') LIKE '1970%'\" > '" + dated + "'")
                               .c_str()));
  EXPECT_EQ("0\n", fileText(dated)) << "every blob read this server journaled is dated";
}

// The disk under the home fails a flush (EIO from fsync, through a preloaded library): the blob
// read that journals its BLOB_READ answers 503, and once the disk flushes again the server
// recovers by itself (it closes its stores and reopens them) instead of answering 503 until
// it is restarted.
TEST_F(ServeControlLog, AfterAFailedFlushTheServerRecoversOnceTheDiskFlushesAgain) {
  writeAgentApp(dir_);
  ASSERT_EQ(0, loom({"run", dir_ / "agent.toml", "--id", "ag"}).exitCode);
  const char* bin = std::getenv("LOOM_TEST_BIN_DIR");
  ASSERT_NE(bin, nullptr);
  std::string flag = dir_ / "disk-fails";
  serve({}, {"LD_PRELOAD=" + std::string(bin) + "/tests/support/libloom_fsync_fault.so",
             "LOOM_FAULT_FSYNC_WHILE=" + flag, "ASAN_OPTIONS=verify_asan_link_order=0"});
  std::string address = blobAddress();
  ASSERT_FALSE(address.empty());
  ASSERT_EQ(200, get("/api/v1/executions/ag/blobs/" + address).first);
  std::ofstream{flag};  // the disk starts failing
  auto [failed, error] = get("/api/v1/executions/ag/blobs/" + address);
  EXPECT_EQ(503, failed) << json::toText(error);
  EXPECT_EQ("unavailable", code(error));
  std::filesystem::remove(flag);  // and works again
  auto [recovered, blob] = get("/api/v1/executions/ag/blobs/" + address);
  EXPECT_EQ(200, recovered) << json::toText(blob);
  auto [listed, runs] = get("/api/v1/executions");
  EXPECT_EQ(200, listed) << json::toText(runs);
}

}  // namespace
}  // namespace loom::testing
