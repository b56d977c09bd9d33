// The OpenAI-compatible model (`model.kind = "openai"`): a Model that POSTs each request to
// {baseUrl}/chat/completions, the wire format spoken by OpenAI, llama.cpp's server, vLLM and
// Ollama (mapping in openai_wire.h; guide in docs/providers.md). It runs as an `llm` effect like
// any model, so its output (with "usage" and "finishReason") is journaled and never re-run on
// replay. The API key is read once, at construction, from the environment variable the options
// name; it goes only into the Authorization header and is scrubbed from every error message,
// so neither the journal nor a log line ever holds it.
//
// Errors (what the caller should do): 429, 408 and 5xx are retried with exponential backoff
// (initialBackoffMillis doubling up to maxBackoffMillis; a Retry-After or retry-after-ms header
// sets the wait instead), as are refused or broken connections; when retries run out, or a
// server asks to wait longer than maxBackoffMillis, UnavailableError. 401/403 ->
// FailedPreconditionError naming the key's environment variable. Any other status ->
// InvalidArgumentError with the server's message. No answer within timeoutMillis ->
// DeadlineExceededError (not retried: the time is spent). A 2xx body that is not a chat
// completion -> InvalidArgumentError naming the endpoint (usually a wrong baseUrl); a 5xx body
// is never parsed, so malformed 5xx bodies are simply retried.
//
// Thread-safe: one model serves many executions at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "loom/agent/model.h"
#include "loom/providers/openai_wire.h"
#include "loom/util/clock.h"

namespace loom::providers {

class OpenAiHttp;
struct HttpReply;

struct OpenAiModelOptions {
  std::string baseUrl;  // API root: "https://api.openai.com/v1", "http://127.0.0.1:8080/v1"
  std::string model;    // the model name the server knows ("gpt-4o-mini", "qwen2.5:7b", ...)
  std::string id;       // effect id; empty = "openai:<model>"
  // Name of the environment variable holding the API key; empty = send no Authorization
  // header (local servers). The key itself is never stored in options or config.
  std::string apiKeyEnv = "OPENAI_API_KEY";
  int64_t timeoutMillis = 120'000;  // connect, and each read/write of one attempt
  int maxRetries = 4;               // retries after the first attempt
  int64_t initialBackoffMillis = 500;
  int64_t maxBackoffMillis = 30'000;
  std::map<std::string, std::string> headers;  // extra request headers (organization, ...)
  json::object extraBody;  // merged into every body (temperature, max_tokens, seed, ...)
  std::shared_ptr<const Clock> clock = systemClock();  // backoff sleeps through it
};

class OpenAiModel : public agent::Model {
 public:
  // Validates the options (InvalidArgumentError naming the option) and reads the API key:
  // FailedPreconditionError when apiKeyEnv names a variable that is unset or empty (set it,
  // or set apiKeyEnv to "" for a server that needs no key). Opens no connection.
  explicit OpenAiModel(OpenAiModelOptions options);
  ~OpenAiModel() override;

  const std::string& id() const override { return id_; }
  // One chat completion; errors as in the header comment. Thread-safe.
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override;

  // The endpoint URL requests go to, for messages and docs.
  const std::string& endpoint() const { return endpoint_; }

 private:
  [[noreturn]] void fail(int status, const std::string& body) const;
  json::value parseReply(const HttpReply& reply) const;
  std::string scrub(std::string text) const;

  OpenAiModelOptions options_;
  std::string id_;
  std::string endpoint_;
  std::string apiKey_;  // never logged, journaled or put in a message
  std::unique_ptr<OpenAiHttp> http_;
};

// Builds an OpenAiModel and registers it as an `llm` task under its id; returns it so the
// caller can set AgentOptions.model to its id(). Throws what the constructor throws, and
// AlreadyExistsError when the id is registered already.
std::shared_ptr<OpenAiModel> registerOpenAiModel(effects::TaskRegistry& tasks,
                                                 OpenAiModelOptions options);

}  // namespace loom::providers
