#include "loom/providers/openai_model.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "loom/util/error.h"
#include "openai_http.h"
#include "util/child_environment.h"

namespace loom::providers {
namespace {

constexpr std::string_view kPath = "/chat/completions";

bool retryable(int status) { return status == 408 || status == 429 || status >= 500; }

// Milliseconds a Retry-After (seconds) or retry-after-ms header asks for; -1 when absent or
// not a number (an HTTP date is not honoured: backoff applies).
int64_t requestedWaitMillis(const HttpReply& reply) {
  auto parse = [](const std::string& text, double scale) -> int64_t {
    if (text.empty()) return -1;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) return -1;
    constexpr double kDay = 86'400'000.0;  // a longer wait is waited for a day at most
    return static_cast<int64_t>(std::min(std::ceil(v * scale), kDay));
  };
  int64_t ms = parse(reply.retryAfterMs, 1);
  return ms >= 0 ? ms : parse(reply.retryAfter, 1000);
}

}  // namespace

OpenAiModel::OpenAiModel(OpenAiModelOptions options) : options_(std::move(options)) {
  if (options_.model.empty()) {
    throw InvalidArgumentError(
        "openai model: option \"model\" is empty; name the model the "
        "server serves (for example \"gpt-4o-mini\")");
  }
  if (options_.maxRetries < 0 || options_.initialBackoffMillis < 0 ||
      options_.maxBackoffMillis < options_.initialBackoffMillis) {
    throw InvalidArgumentError("openai model '" + options_.model +
                               "': maxRetries and initialBackoffMillis must be >= 0 and "
                               "maxBackoffMillis >= initialBackoffMillis");
  }
  if (!options_.clock) options_.clock = systemClock();
  markSecretVariable(options_.apiKeyEnv);  // no tool Loom starts inherits the API key
  id_ = options_.id.empty() ? "openai:" + options_.model : options_.id;
  http_ = std::make_unique<OpenAiHttp>(options_.baseUrl, options_.timeoutMillis);
  endpoint_ = http_->url(std::string(kPath));
  if (!options_.apiKeyEnv.empty()) {
    const char* key = std::getenv(options_.apiKeyEnv.c_str());
    if (key == nullptr || *key == '\0') {
      throw FailedPreconditionError(
          "model '" + id_ + "': the environment variable " + options_.apiKeyEnv +
          " that should hold the API key is not set; export it, or set apiKeyEnv to \"\" for "
          "a server that needs no key (llama.cpp, vLLM, Ollama on your machine)");
    }
    apiKey_ = key;
  }
}

OpenAiModel::~OpenAiModel() = default;

std::string OpenAiModel::scrub(std::string text) const {
  if (apiKey_.empty()) return text;
  for (auto at = text.find(apiKey_); at != std::string::npos; at = text.find(apiKey_, at)) {
    text.replace(at, apiKey_.size(), "[redacted]");
  }
  return text;
}

void OpenAiModel::fail(int status, const std::string& body) const {
  std::string what = "model '" + id_ + "': POST " + endpoint_ + " returned " +
                     std::to_string(status) + ": " + scrub(serverErrorMessage(body));
  if (status == 401 || status == 403) {
    throw FailedPreconditionError(what + "; check the API key in the environment variable " +
                                  (options_.apiKeyEnv.empty()
                                       ? std::string("named by apiKeyEnv (none is set)")
                                       : options_.apiKeyEnv) +
                                  " and that it may use model '" + options_.model + "'");
  }
  if (status == 404) {
    throw InvalidArgumentError(what +
                               "; check baseUrl (the API root, e.g. .../v1) and that "
                               "the server serves model '" +
                               options_.model + "'");
  }
  throw InvalidArgumentError(what);
}

json::value OpenAiModel::complete(const effects::EffectContext&,
                                  const agent::ModelRequest& request) {
  json::object body = toChatCompletionsBody(request, {options_.model, options_.extraBody});
  std::string text = json::toText(body);
  HttpHeaders headers{{"Accept", "application/json"}, {"User-Agent", "loom/" LOOM_VERSION}};
  for (const auto& [name, value] : options_.headers) headers.emplace_back(name, value);
  if (!apiKey_.empty()) headers.emplace_back("Authorization", "Bearer " + apiKey_);

  for (int attempt = 0;; ++attempt) {
    std::optional<HttpReply> reply;
    std::string failure;
    try {
      reply = http_->post(std::string(kPath), headers, text);
    } catch (const UnavailableError& e) {
      failure = scrub(e.what());  // refused or broken connection: retried like a 503
    }
    int64_t wait = -1;
    if (reply) {
      if (reply->status >= 200 && reply->status < 300) return parseReply(*reply);
      if (!retryable(reply->status)) fail(reply->status, reply->body);
      failure = std::to_string(reply->status) + " (" + scrub(serverErrorMessage(reply->body)) + ")";
      wait = requestedWaitMillis(*reply);
      if (wait > options_.maxBackoffMillis) {
        throw RetryAfterError("model '" + id_ + "': POST " + endpoint_ + " returned " + failure +
                                  " and asked to retry after " + std::to_string(wait) +
                                  " ms, longer than maxBackoffMillis (" +
                                  std::to_string(options_.maxBackoffMillis) + "); retry later",
                              wait);
      }
    }
    if (attempt >= options_.maxRetries) {
      std::string what = "model '" + id_ + "': " + endpoint_ + " failed " +
                         std::to_string(attempt + 1) + " time(s), last with " + failure +
                         "; the server is unavailable or overloaded, retry later";
      if (wait >= 0) throw RetryAfterError(what, wait);  // it said when to come back
      throw UnavailableError(what);
    }
    if (wait < 0) {
      wait = std::min(options_.maxBackoffMillis,
                      options_.initialBackoffMillis << std::min(attempt, 30));
    }
    options_.clock->sleepMillis(wait);
  }
}

json::value OpenAiModel::parseReply(const HttpReply& reply) const {
  boost::system::error_code ec;
  json::value parsed = boost::json::parse(reply.body, ec);
  if (ec) {
    throw InvalidArgumentError("model '" + id_ + "': POST " + endpoint_ + " returned " +
                               std::to_string(reply.status) + " with a body that is not JSON (" +
                               ec.message() + "): " + scrub(serverErrorMessage(reply.body)) +
                               "; check that baseUrl is the API root of an OpenAI-compatible "
                               "server");
  }
  return fromChatCompletionsBody(parsed, endpoint_);
}

std::shared_ptr<OpenAiModel> registerOpenAiModel(effects::TaskRegistry& tasks,
                                                 OpenAiModelOptions options) {
  auto model = std::make_shared<OpenAiModel>(std::move(options));
  agent::registerModel(tasks, model);
  return model;
}

}  // namespace loom::providers
