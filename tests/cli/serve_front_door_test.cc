// `loom serve` under hostile clients, with the real binary: slow clients that never finish
// their request, more connections than the server has threads, a crowd connecting at once, and
// Host headers built to pass a loose loopback check.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>

#include "serve_fixture.h"

namespace loom::testing {
namespace {

class ServeFrontDoor : public ServeCli {
 protected:
  void SetUp() override { ASSERT_EQ(0, loom({"run", "example.approval", "--id", "a1"}).exitCode); }
  // A TCP connection to the server that sends `start`, then nothing; -1 when refused.
  int openSlow(const std::string& start) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd);
      return -1;
    }
    if (!start.empty()) (void)::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
    return fd;
  }
  // The authenticated listing, and how long it took.
  std::pair<int, std::chrono::milliseconds> timedListing(const std::string& token) {
    auto start = std::chrono::steady_clock::now();
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(20, 0);
    auto r = c.Get("/api/v1/executions", {{"Authorization", "Bearer " + token}});
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    return {r ? r->status : -1, took};
  }
};

// Fifty clients each send a request's first line and then one header byte every 0.8 s (the old
// per-read timeout of 5 s never tripped): with 16 server threads, every request used to wait
// for them. Now a slow request holds no thread, and the token holder is answered at once.
TEST_F(ServeFrontDoor, FiftySlowConnectionsDoNotStallAnAuthenticatedRequest) {
  std::string token(40, 't');
  std::ofstream(dir_ / "token") << token << "\n";
  serve({"--bind", "127.0.0.1", "--token-file", dir_ / "token"});
  std::vector<int> slow;
  for (int i = 0; i < 50; ++i) {
    int fd = openSlow("GET /api/v1/executions HTTP/1.1\r\nX-Slow: ");
    ASSERT_GE(fd, 0) << "connection " << i;
    slow.push_back(fd);
  }
  std::atomic<bool> done{false};
  std::thread drip([&] {
    while (!done) {
      for (int fd : slow) (void)::send(fd, "a", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (int round = 0; round < 3; ++round) {
    auto [status, took] = timedListing(token);
    EXPECT_EQ(200, status);
    // Stalled, it waited for a slow client's timeout: 5 s and more.
    EXPECT_LT(took.count(), 2000) << "round " << round;
  }
  done = true;
  drip.join();
  for (int fd : slow) ::close(fd);
}

// More connections than one peer may keep arriving: the oldest are dropped, the newest answered.
TEST_F(ServeFrontDoor, APeerOpeningHundredsOfIdleConnectionsCannotKeepANewOneOut) {
  serve();
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) {
    int fd = openSlow("");
    if (fd >= 0) idle.push_back(fd);
  }
  auto [status, took] = timedListing("");
  EXPECT_EQ(200, status);
  EXPECT_LT(took.count(), 2000);
  for (int fd : idle) ::close(fd);
}

// A crowd connecting at once is queued (the listen backlog is the system's), not dropped.
TEST_F(ServeFrontDoor, ACrowdConnectingAtOnceIsAnsweredWhole) {
  serve();
  std::atomic<int> answered{0};
  std::vector<std::thread> crowd;
  for (int i = 0; i < 60; ++i) {
    crowd.emplace_back([&] {
      httplib::Client c("127.0.0.1", port_);
      c.set_connection_timeout(10, 0);
      c.set_read_timeout(20, 0);
      if (auto r = c.Get("/api/v1/executions"); r && r->status == 200) ++answered;
    });
  }
  for (auto& t : crowd) t.join();
  EXPECT_EQ(60, answered.load());
  // ss(8) shows a listening socket's backlog as its Send-Q: the system's maximum, not 5.
  std::string out = dir_ / "ss.txt";
  std::string command = "ss -Hltn 'sport = :" + std::to_string(port_) + "' > " + out;
  ASSERT_EQ(0, std::system(command.c_str()));
  std::istringstream row(fileText(out));
  std::string state, recvQ;
  int backlog = 0;
  row >> state >> recvQ >> backlog;
  EXPECT_GE(backlog, 128) << fileText(out);
}

// Without a token only a loopback Host is served, and the Host must be exactly host[:port].
TEST_F(ServeFrontDoor, HostileHostHeadersAreRefused) {
  serve();
  std::string port = std::to_string(port_);
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1:" + port + "@evil.example", "evil.example#@127.0.0.1",
        "127.0.0.1.evil.example", "127.0.0.1:" + port + ":1", "127.0.0.1:" + port + "/x",
        "[::1]evil.example", "localhost:", "127.0.0.1 evil.example", "user@127.0.0.1",
        std::string("")}) {
    auto [status, body] = get("/api/v1/executions", {{"Host", host}});
    EXPECT_EQ(403, status) << "Host '" << host << "'";
  }
  for (const std::string& host : std::vector<std::string>{
           "127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "127.0.0.1"}) {
    auto [status, body] = get("/api/v1/executions", {{"Host", host}});
    EXPECT_EQ(200, status) << "Host '" << host << "'";
  }
}

}  // namespace
}  // namespace loom::testing
