#include "openai_http.h"

#include <httplib.h>

#include <chrono>

#include "loom/util/error.h"
#include "util/sigpipe_block.h"

namespace loom::providers {
namespace {

constexpr std::size_t kMaxIdleClients = 8;

// What went wrong, in words: httplib's own names are bare ("Connection").
std::string describeHttpError(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "could not connect";
    case httplib::Error::ConnectionTimeout:
      return "the connection timed out";
    case httplib::Error::Read:
      return "the connection broke while reading the answer";
    case httplib::Error::Write:
      return "the connection broke while sending the request";
    case httplib::Error::SSLConnection:
      return "the TLS connection could not be set up";
    case httplib::Error::SSLServerVerification:
      return "the server's TLS certificate is not trusted";
    case httplib::Error::SSLLoadingCerts:
      return "the system's TLS certificates could not be loaded";
    case httplib::Error::ExceedRedirectCount:
      return "too many redirects";
    case httplib::Error::Canceled:
      return "the request was cancelled";
    default:
      return "the request failed (" + httplib::to_string(error) + ")";
  }
}

}  // namespace

OpenAiHttp::OpenAiHttp(const std::string& baseUrl, int64_t timeoutMillis)
    : timeoutMillis_(timeoutMillis) {
  std::size_t schemeEnd = baseUrl.find("://");
  std::string scheme = schemeEnd == std::string::npos ? "" : baseUrl.substr(0, schemeEnd);
  if (scheme != "http" && scheme != "https") {
    throw InvalidArgumentError("model baseUrl '" + baseUrl +
                               "' must start with http:// or https:// (for example "
                               "http://127.0.0.1:8080/v1 or https://api.openai.com/v1)");
  }
  std::size_t pathStart = baseUrl.find('/', schemeEnd + 3);
  origin_ = baseUrl.substr(0, pathStart);
  prefix_ = pathStart == std::string::npos ? "" : baseUrl.substr(pathStart);
  while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
  if (origin_.size() == schemeEnd + 3) {
    throw InvalidArgumentError("model baseUrl '" + baseUrl + "' names no host");
  }
  baseUrl_ = origin_ + prefix_;
  if (timeoutMillis_ <= 0) {
    throw InvalidArgumentError("model timeoutMillis must be positive, got " +
                               std::to_string(timeoutMillis_));
  }
}

OpenAiHttp::~OpenAiHttp() = default;

std::unique_ptr<httplib::Client> OpenAiHttp::take() {
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      auto client = std::move(idle_.back());
      idle_.pop_back();
      return client;
    }
  }
  auto client = std::make_unique<httplib::Client>(origin_);
  auto timeout = std::chrono::milliseconds(timeoutMillis_);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  client->set_tcp_nodelay(true);  // headers and body go out in two writes: no Nagle delay
  client->set_follow_location(false);
  return client;
}

void OpenAiHttp::giveBack(std::unique_ptr<httplib::Client> client) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kMaxIdleClients) idle_.push_back(std::move(client));
}

HttpReply OpenAiHttp::post(const std::string& path, const HttpHeaders& headers,
                           const std::string& body) {
  httplib::Headers h;
  for (const auto& [name, value] : headers) h.emplace(name, value);
  auto client = take();
  auto started = std::chrono::steady_clock::now();
  httplib::Result result = [&] {
    SigpipeBlock noSigpipe;
    return client->Post(prefix_ + path, h, body, "application/json");
  }();
  if (!result) {
    httplib::Error error = result.error();
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - started)
                       .count();
    std::string what = "POST " + url(path) + ": " + describeHttpError(error);
    if (error == httplib::Error::SSLServerVerification ||
        error == httplib::Error::SSLLoadingCerts) {
      throw FailedPreconditionError(what +
                                    "; the server's TLS certificate could not be "
                                    "verified (check the URL and the system CA store)");
    }
    bool connecting = error == httplib::Error::Connection || error == httplib::Error::SSLConnection;
    if (error == httplib::Error::ConnectionTimeout || (!connecting && elapsed >= timeoutMillis_)) {
      throw DeadlineExceededError(what + " after " + std::to_string(elapsed) +
                                  " ms; no answer within timeoutMillis (" +
                                  std::to_string(timeoutMillis_) + ")");
    }
    throw UnavailableError(what + (connecting ? "; is the server running and reachable?" : ""));
  }
  HttpReply reply;
  reply.status = result->status;
  reply.body = std::move(result->body);
  reply.retryAfter = result->get_header_value("Retry-After");
  reply.retryAfterMs = result->get_header_value("retry-after-ms");
  giveBack(std::move(client));
  return reply;
}

}  // namespace loom::providers
