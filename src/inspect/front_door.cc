#include "inspect/front_door.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <map>
#include <vector>

#include "loom/util/error.h"

namespace loom::inspect {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxHeaderBytes = 8192;  // cpp-httplib's own limit on a header section
constexpr std::size_t kReadChunk = 16 * 1024;

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The value of header `name` (lowercase) in a lowercased header section; empty when absent.
std::string headerValue(const std::string& headers, std::string_view name) {
  std::string key = "\r\n" + std::string(name) + ":";
  std::size_t at = headers.find(key);
  if (at == std::string::npos) return "";
  std::size_t start = at + key.size();
  std::size_t end = headers.find("\r\n", start);
  std::string value = headers.substr(start, end - start);
  value.erase(0, value.find_first_not_of(" \t"));
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  return value;
}

// True when `buffer` holds a whole request, or as much as the server would ever read of it
// (cpp-httplib then answers 400, 413 or 431 from what it has).
bool requestComplete(const std::string& buffer, std::size_t maxBody) {
  std::size_t end = buffer.find("\r\n\r\n");
  if (end == std::string::npos) return buffer.size() >= kMaxHeaderBytes;
  std::string headers = lowercase(std::string_view(buffer).substr(0, end + 2));
  std::size_t body = buffer.size() - end - 4;
  if (headerValue(headers, "transfer-encoding").find("chunked") != std::string::npos) {
    return buffer.ends_with("0\r\n\r\n") || body > maxBody;
  }
  std::string length = headerValue(headers, "content-length");
  if (length.empty()) return true;
  char* stop = nullptr;
  unsigned long long n = std::strtoull(length.c_str(), &stop, 10);
  if (stop == length.c_str() || *stop != '\0' || n > maxBody) return true;  // refused as it is
  return body >= n;
}

void setNonBlocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  ::fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

// The numeric address and port of an accepted peer.
std::pair<std::string, int> peerOf(const sockaddr_storage& addr, socklen_t len) {
  char host[NI_MAXHOST] = {0};
  char port[NI_MAXSERV] = {0};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof host, port,
                    sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return {"", 0};
  }
  return {host, std::atoi(port)};
}

}  // namespace

// A connection still sending its request.
struct FrontDoorServer::Arriving {
  UniqueFd fd;
  std::string peer;
  int port = 0;
  Clock::time_point deadline;
  std::string buffer;
};

// The stream cpp-httplib routes a request from: the request as read, then the socket for the
// response.
class FrontDoorServer::BufferedStream : public httplib::Stream {
 public:
  BufferedStream(int fd, std::string request, std::string peer, int port, int writeTimeoutMs)
      : fd_(fd), request_(std::move(request)), peer_(std::move(peer)), port_(port),
        writeTimeoutMs_(writeTimeoutMs) {}
  bool is_readable() const override { return at_ < request_.size(); }
  bool is_writable() const override {
    pollfd p{fd_, POLLOUT, 0};
    return ::poll(&p, 1, writeTimeoutMs_) == 1 && (p.revents & POLLOUT) != 0;
  }
  ssize_t read(char* ptr, size_t size) override {
    std::size_t n = std::min(size, request_.size() - at_);
    std::memcpy(ptr, request_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do {
      n = ::send(fd_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    return n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = peer_;
    port = port_;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ip.clear();
    port = 0;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      std::tie(ip, port) = peerOf(addr, len);
    }
  }
  socket_t socket() const override { return fd_; }

 private:
  int fd_;
  std::string request_;
  std::size_t at_ = 0;
  std::string peer_;
  int port_;
  int writeTimeoutMs_;
};

FrontDoorServer::FrontDoorServer() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw UnavailableError(std::string("cannot create the server's wake-up pipe: ") +
                           std::strerror(errno));
  }
  wakeRead_ = UniqueFd(fds[0]);
  wakeWrite_ = UniqueFd(fds[1]);
}

void FrontDoorServer::stopServing() {
  stopping_ = true;
  char byte = 1;
  ssize_t ignored = ::write(wakeWrite_.get(), &byte, 1);  // async-signal-safe
  (void)ignored;
}

void FrontDoorServer::route(int fd, std::string request, const std::string& peer, int port,
                            const FrontDoorLimits& limits) {
  BufferedStream stream(fd, std::move(request), peer, port, limits.writeTimeoutMs);
  bool closed = false;
  process_request(stream, true, closed, nullptr);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

void FrontDoorServer::serve(const FrontDoorLimits& limits) {
  int listenFd = svr_sock_;
  if (listenFd == INVALID_SOCKET) throw UnavailableError("the server is bound to no address");
  ::listen(listenFd, SOMAXCONN);  // cpp-httplib listened with a backlog of 5
  setNonBlocking(listenFd, true);
  httplib::ThreadPool pool(limits.threads);
  std::list<Arriving> arriving;  // oldest first
  std::map<std::string, std::size_t> perPeer;
  auto drop = [&](std::list<Arriving>::iterator it) {
    if (--perPeer[it->peer] == 0) perPeer.erase(it->peer);
    return arriving.erase(it);  // closes the socket
  };
  auto dropOldest = [&](const std::string* peer) {
    for (auto it = arriving.begin(); it != arriving.end(); ++it) {
      if (peer == nullptr || it->peer == *peer) {
        drop(it);
        return;
      }
    }
  };
  std::size_t capacity = kMaxHeaderBytes + limits.maxBodyBytes + 1024;
  std::vector<pollfd> polled;
  bool starved = false;
  std::string failure;  // thrown once the routing threads are joined
  while (!stopping_) {
    // Out of descriptors with none to drop: new connections wait while routing frees some.
    short accepting = starved ? 0 : POLLIN;
    polled.assign({{listenFd, accepting, 0}, {wakeRead_.get(), POLLIN, 0}});
    int waitMs = starved ? 50 : 1000;
    Clock::time_point now = Clock::now();
    for (const Arriving& a : arriving) {
      polled.push_back({a.fd.get(), POLLIN, 0});
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(a.deadline - now).count();
      waitMs = static_cast<int>(std::clamp<int64_t>(left, 0, waitMs));
    }
    if (::poll(polled.data(), polled.size(), waitMs) < 0 && errno != EINTR) {
      failure = std::string("the server cannot wait for its connections: ") + std::strerror(errno);
      break;
    }
    starved = false;
    if (stopping_) break;
    // Requests first, then new connections: a pollfd's index is its connection's place.
    std::size_t i = 2;
    now = Clock::now();
    for (auto it = arriving.begin(); it != arriving.end(); ++i) {
      Arriving& a = *it;
      bool gone = false;
      if (polled[i].revents != 0) {
        char chunk[kReadChunk];
        ssize_t n = ::recv(a.fd.get(), chunk, std::min(sizeof chunk, capacity - a.buffer.size()), 0);
        if (n > 0) {
          a.buffer.append(chunk, static_cast<std::size_t>(n));
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          gone = true;
        }
      }
      if (!gone && (requestComplete(a.buffer, limits.maxBodyBytes) || a.buffer.size() >= capacity)) {
        int fd = a.fd.release();
        setNonBlocking(fd, false);
        pool.enqueue([this, fd, request = std::move(a.buffer), peer = a.peer, port = a.port,
                      limits]() mutable { route(fd, std::move(request), peer, port, limits); });
        it = drop(it);
      } else if (gone || now >= a.deadline) {
        it = drop(it);  // closed, or too slow: cut without an answer
      } else {
        ++it;
      }
    }
    while (true) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      int fd = ::accept4(listenFd, reinterpret_cast<sockaddr*>(&addr), &len,
                         SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0 && (errno == EMFILE || errno == ENFILE) && !arriving.empty()) {
        dropOldest(nullptr);  // out of descriptors: the slowest arrival makes room
        continue;
      }
      if (fd < 0) {  // EAGAIN: none left; else tried again at the next wake-up
        starved = errno == EMFILE || errno == ENFILE;
        break;
      }
      auto [peer, port] = peerOf(addr, len);
      if (arriving.size() >= limits.maxArriving) dropOldest(nullptr);
      if (perPeer[peer] >= limits.maxArrivingPerPeer) dropOldest(&peer);
      ++perPeer[peer];
      arriving.push_back(Arriving{UniqueFd(fd), peer, port,
                                  Clock::now() + std::chrono::milliseconds(limits.requestDeadlineMs),
                                  {}});
    }
  }
  arriving.clear();
  pool.shutdown();  // lets the requests being routed finish
  ::close(listenFd);
  svr_sock_ = INVALID_SOCKET;
  if (!failure.empty()) throw UnavailableError(failure);
}

}  // namespace loom::inspect
