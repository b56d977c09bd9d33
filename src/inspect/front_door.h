// The inspector server's front door: an accept loop of its own in front of cpp-httplib's
// request handling, so that no client holds a server thread before its whole request arrived.
// One thread polls every connection still sending its request, with a deadline for the whole
// request (not per read: a client sending one byte every 2 s is cut at the deadline), and
// hands a complete request, read into memory, to a pool thread that routes it. When too many
// requests are still arriving (in all, or from one peer) the oldest of them is dropped, so a
// fresh request (an authenticated one among slow strangers) always gets in. The listen
// backlog is the system's maximum.
#pragma once

#include <httplib.h>

#include <atomic>
#include <cstddef>

#include "util/unique_fd.h"

namespace loom::inspect {

struct FrontDoorLimits {
  int requestDeadlineMs = 10'000;    // from accept to the request's last byte
  std::size_t maxArriving = 512;     // connections still sending their request, in all
  std::size_t maxArrivingPerPeer = 64;
  std::size_t threads = 16;          // routing threads
  std::size_t maxBodyBytes = 64 * 1024;
  int writeTimeoutMs = 5'000;        // a response write that makes no progress for this long
};

class FrontDoorServer : public httplib::Server {
 public:
  FrontDoorServer();
  // Serves on the socket bind_to_port / bind_to_any_port opened, until stopServing(). Throws
  // UnavailableError when nothing is bound.
  void serve(const FrontDoorLimits& limits);
  // Ends serve() (from any thread, e.g. a signal's); requests being routed finish first.
  void stopServing();

 private:
  struct Arriving;
  class BufferedStream;
  void route(int fd, std::string request, const std::string& peer, int port,
             const FrontDoorLimits& limits);

  UniqueFd wakeRead_, wakeWrite_;
  std::atomic<bool> stopping_{false};
};

}  // namespace loom::inspect
