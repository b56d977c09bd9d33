// A chat-completions server for tests: cpp-httplib on 127.0.0.1 (a free port), in a thread,
// answering POST /v1/chat/completions with scripted replies in order and recording each
// request. Stopped by its destructor. Thread-safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "loom/json/json.h"

namespace loom::testing {

class ChatServer {
 public:
  struct Reply {
    int status = 200;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    int delayMillis = 0;
  };
  struct Request {
    std::string body;
    std::string authorization;
    std::string organization;
  };

  ChatServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                httplib::Response& res) {
      Reply reply;
      {
        std::lock_guard lock(mu_);
        requests_.push_back({req.body, req.get_header_value("Authorization"),
                             req.get_header_value("OpenAI-Organization")});
        if (std::chrono::steady_clock::now() < outageUntil_) {
          reply = {503, R"({"error":{"message":"overloaded: a scripted outage"}})"};
        } else if (replies_.empty()) {
          reply = {500, R"({"error":{"message":"the test scripted no reply for this request"}})"};
        } else {
          reply = replies_.front();
          replies_.pop_front();
        }
      }
      if (reply.delayMillis > 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(reply.delayMillis));
      }
      res.status = reply.status;
      for (const auto& [k, v] : reply.headers) res.set_header(k, v);
      res.set_content(reply.body, "application/json");
    });
    server_.set_tcp_nodelay(true);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ChatServer() {
    server_.stop();
    thread_.join();
  }

  std::string baseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  void push(Reply reply) {
    std::lock_guard lock(mu_);
    replies_.push_back(std::move(reply));
  }
  // Until `until`, every request gets a 503 and no scripted reply is used.
  void outageUntil(std::chrono::steady_clock::time_point until) {
    std::lock_guard lock(mu_);
    outageUntil_ = until;
  }
  std::vector<Request> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  json::value body(std::size_t i) { return json::parse(requests().at(i).body, "request body"); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::deque<Reply> replies_;      // GUARDED_BY(mu_)
  std::chrono::steady_clock::time_point outageUntil_;  // GUARDED_BY(mu_)
  std::vector<Request> requests_;  // GUARDED_BY(mu_)
};

// A 200 reply whose body is a chat completion of `message` (an OpenAI message object).
inline ChatServer::Reply completion(json::value message, std::string finishReason = "stop",
                                    int promptTokens = 120, int completionTokens = 8) {
  json::object body{{"id", "chatcmpl-1"},
                    {"object", "chat.completion"},
                    {"model", "test-model"},
                    {"choices", json::array{json::object{{"index", 0},
                                                         {"message", std::move(message)},
                                                         {"finish_reason", finishReason}}}},
                    {"usage",
                     {{"prompt_tokens", promptTokens},
                      {"completion_tokens", completionTokens},
                      {"total_tokens", promptTokens + completionTokens}}}};
  return {200, json::toText(body)};
}

inline ChatServer::Reply answer(const std::string& text) {
  return completion(json::object{{"role", "assistant"}, {"content", text}});
}

inline json::object toolCall(const std::string& id, const std::string& name,
                             const std::string& argumentsText) {
  return json::object{{"id", id},
                      {"type", "function"},
                      {"function", {{"name", name}, {"arguments", argumentsText}}}};
}

}  // namespace loom::testing
