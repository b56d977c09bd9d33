// The scripted model: a deterministic Model driven by a script, the embedded default for
// demos, tests and benchmarks. The script (JSON, or the same shape in TOML):
//   {"turns": [{"toolCalls": [{"name": "fetch_report", "arguments": {"page": 1}}]},
//              {"answer": "All done."}],
//    "generate": {"turns": 200, "toolCalls": [{"name": "fetch_report",
//                                              "arguments": {"page": "{turn}"}}],
//                 "then": [{"toolCalls": [{"name": "publish"}]}],
//                 "answer": "Report complete."},
//    "summary": "Summary text for compaction requests.",
//    "latencyMs": 200}
// `turns` gives turn 1, 2, ... explicitly; `generate` covers turns after the explicit ones up
// to its `turns` count ("{turn}" in a string argument is replaced by the turn number; a string
// that is exactly "{turn}" becomes the integer), then runs the turns of `then` in order, then
// answers. `latencyMs` (optional) makes every turn take that long, as a real model's would
// (benchmarks of workers). The turn is read from the step
// id (`<loop>#turn:<i>:model`), so the answer for a turn never depends on call history.
// Thread-safe.
#pragma once

#include <atomic>
#include <string>

#include "loom/agent/model.h"

namespace loom::providers {

class ScriptedModel : public agent::Model {
 public:
  // Throws InvalidArgumentError naming the bad part of the script. `origin` names the script
  // in errors (its file). A turn past the script's last one is an InvalidArgumentError naming
  // it (a script that ends in tool calls has no answer), never a made-up answer.
  ScriptedModel(std::string id, json::value script, std::string origin = "the model script");
  // Loads a script from a .json or .toml file.
  static json::value loadScript(const std::string& path);

  const std::string& id() const override { return id_; }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override;

  // How many completions this model produced (replayed steps do not call it).
  int64_t calls() const { return calls_.load(); }

 private:
  json::value turnMessage(int64_t turn) const;
  std::string id_;
  json::value script_;
  std::string origin_;
  int64_t explicitTurns_ = 0;
  int64_t latencyMillis_ = 0;
  std::atomic<int64_t> calls_{0};
};

}  // namespace loom::providers
