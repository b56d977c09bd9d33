// Shared by the middleware and app tests: a recording middleware that shows what one layer of
// a chain sees (Trace, Recorder); the temporary folder of support/temp_dir.h. Test-only.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "loom/effects/middleware.h"
#include "loom/json/json.h"
#include "support/temp_dir.h"

namespace loom::testing {

// One line per event seen by a Recorder: "<layer> in <input json>" / "<layer> out <result>".
struct Trace {
  std::mutex mu;
  std::vector<std::string> lines;
  void add(std::string line) {
    std::lock_guard lock(mu);
    lines.push_back(std::move(line));
  }
  std::vector<std::string> snapshot() {
    std::lock_guard lock(mu);
    return lines;
  }
};

// Records the input it receives and the result it gets back, and tags both: the input it
// passes inward gets "+<name>" appended to its "path" array, the result it passes outward
// gets "<name>" appended to its "seenBy" array (when they are objects).
class Recorder : public effects::Middleware {
 public:
  Recorder(std::string name, std::shared_ptr<Trace> trace)
      : name_(std::move(name)), trace_(std::move(trace)) {}
  std::string_view name() const override { return name_; }
  json::value invoke(const effects::EffectContext& ctx, json::value input,
                     const effects::Next& next) override {
    ++calls;
    trace_->add(name_ + " in " + json::toText(input) + (ctx.transient ? " transient" : ""));
    if (input.is_object()) append(input.as_object(), "path", "+" + name_);
    json::value result = next(ctx, std::move(input));
    trace_->add(name_ + " out " + json::toText(result));
    if (result.is_object()) append(result.as_object(), "seenBy", name_);
    return result;
  }
  std::atomic<int> calls{0};

 private:
  static void append(json::object& o, std::string_view key, const std::string& item) {
    json::value& list = o[key];
    if (!list.is_array()) list.emplace_array();
    list.as_array().emplace_back(item);
  }
  std::string name_;
  std::shared_ptr<Trace> trace_;
};

}  // namespace loom::testing
