// A model for tests that keeps what it was asked: it forwards every completion to an inner
// model (usually a ScriptedModel) and records the messages of each request by step id, the
// last request's messages and the number of calls, so a test can compare what the model
// received with what was journaled, and count the turns a replay did not call it for.
// Thread-safe (the records are guarded; read them when no completion runs).
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "loom/agent/model.h"

namespace loom::testing {

class RecordingModel : public agent::Model {
 public:
  explicit RecordingModel(std::shared_ptr<agent::Model> inner) : inner_(std::move(inner)) {}

  const std::string& id() const override { return inner_->id(); }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override {
    {
      std::lock_guard lock(mu_);
      ++calls;
      last = request.messages.toArray();
      requests[ctx.stepId] = last;
    }
    return inner_->complete(ctx, request);
  }

  std::atomic<int> calls{0};
  json::array last;                             // the last request's messages
  std::map<std::string, json::array> requests;  // each request's messages, by step id

 private:
  std::mutex mu_;
  std::shared_ptr<agent::Model> inner_;
};

}  // namespace loom::testing
