// `loom`'s live line on a terminal (docs/observability.md, "Progress"): while a run runs here,
// one line on stderr, rewritten in place, saying its turn, its tokens and its last step.
// Nothing when stderr is not a terminal or with --quiet: a log file gets only results and
// warnings. Thread-safe (run events come from the runner's threads).
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "loom/kernel/usage.h"
#include "loom/workflow/runtime.h"

namespace loom::cli {

class ProgressLine {
 public:
  // Shown only when `enabled` (stderr is a terminal and --quiet was not given).
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void onEvent(const workflow::RunEvent& event);
  // Erases the line (before a result is printed; at a park or an end).
  void clear();
  // The line as it would read now (without the carriage return).
  std::string text() const;

 private:
  void draw(bool force);  // REQUIRES(mu_)

  const bool enabled_;
  mutable std::mutex mu_;
  std::string id_;              // GUARDED_BY(mu_)
  int64_t turn_ = 0;            // GUARDED_BY(mu_)
  int64_t steps_ = 0;           // GUARDED_BY(mu_)
  kernel::TokenUsage usage_;    // GUARDED_BY(mu_)
  std::string last_;            // GUARDED_BY(mu_): "fetch_report 104 ms", "calling research"
  std::size_t shownWidth_ = 0;  // GUARDED_BY(mu_): what is on the terminal now
  std::chrono::steady_clock::time_point drawnAt_;  // GUARDED_BY(mu_)
};

}  // namespace loom::cli
