// The HTTP transport of the OpenAI-compatible model: POSTs JSON text to one base URL over a
// small pool of keep-alive cpp-httplib clients (a client carries one request at a time, so
// concurrent calls each take their own). Knows nothing of the wire format or of retries.
// Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace httplib {
class Client;
}

namespace loom::providers {

struct HttpReply {
  int status = 0;
  std::string body;
  std::string retryAfter;    // the Retry-After header (seconds), empty when absent
  std::string retryAfterMs;  // the retry-after-ms header some servers send, empty when absent
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

class OpenAiHttp {
 public:
  // `baseUrl` is "http://host[:port][/prefix]" or "https://...". Throws InvalidArgumentError
  // for any other form. `timeoutMillis` bounds connecting, each read and each write.
  OpenAiHttp(const std::string& baseUrl, int64_t timeoutMillis);
  ~OpenAiHttp();

  // POSTs `body` (application/json) to `<baseUrl><path>` and returns whatever status came
  // back. Throws UnavailableError when no connection could be made or it broke (retrying may
  // help), DeadlineExceededError when the server did not answer in time, and
  // FailedPreconditionError when TLS verification failed; each names the URL.
  HttpReply post(const std::string& path, const HttpHeaders& headers, const std::string& body);

  // The full URL of `path`, for messages.
  std::string url(const std::string& path) const { return baseUrl_ + path; }

 private:
  std::unique_ptr<httplib::Client> take();
  void giveBack(std::unique_ptr<httplib::Client> client);

  std::string baseUrl_;  // without a trailing slash
  std::string origin_;   // scheme://host[:port]
  std::string prefix_;   // path prefix, "" or "/v1"
  int64_t timeoutMillis_;
  std::mutex mu_;
  std::vector<std::unique_ptr<httplib::Client>> idle_;  // GUARDED_BY(mu_)
};

}  // namespace loom::providers
