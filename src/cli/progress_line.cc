#include "progress_line.h"

#include <iostream>

#include "effects/step_ids.h"
#include "inspect/usage_text.h"

namespace loom::cli {
namespace {

// At most this often, but for the first draw and a park or an end: a terminal is not a log.
constexpr auto kRedrawEvery = std::chrono::milliseconds(100);

}  // namespace

void ProgressLine::onEvent(const workflow::RunEvent& e) {
  if (!enabled_) return;
  using Kind = workflow::RunEvent::Kind;
  std::lock_guard lock(mu_);
  id_ = e.executionId;
  if (e.kind == Kind::kParked || e.kind == Kind::kEnded) {
    if (shownWidth_ > 0) std::cerr << '\r' << std::string(shownWidth_, ' ') << '\r' << std::flush;
    shownWidth_ = 0;
    return;
  }
  if (auto step = effects::parseAgentStepId(e.stepId)) turn_ = std::max(turn_, step->turn);
  if (e.kind == Kind::kStepStarted) {
    last_ = (e.taskKind == "llm" ? "calling " : "running ") + e.effectId;
  } else {
    ++steps_;
    if (e.usage) usage_.add(*e.usage);
    last_ = e.effectId + " " + std::to_string(e.durationMillis) + " ms";
  }
  draw(false);
}

std::string ProgressLine::text() const {
  std::string line = "loom: " + id_;
  if (turn_ > 0) line += " · turn " + std::to_string(turn_);
  line += " · " + std::to_string(steps_) + " step" + (steps_ == 1 ? "" : "s");
  if (usage_.modelTurns > 0) line += " · " + inspect::shortUsage(usage_) + " tokens";
  if (!last_.empty()) line += " · " + last_;
  return line.size() > 100 ? line.substr(0, 99) + "~" : line;
}

void ProgressLine::draw(bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && shownWidth_ > 0 && now - drawnAt_ < kRedrawEvery) return;
  std::string line = text();
  std::string pad = line.size() < shownWidth_ ? std::string(shownWidth_ - line.size(), ' ') : "";
  std::cerr << '\r' << line << pad << std::flush;
  shownWidth_ = line.size();
  drawnAt_ = now;
}

void ProgressLine::clear() {
  if (!enabled_) return;
  std::lock_guard lock(mu_);
  if (shownWidth_ > 0) std::cerr << '\r' << std::string(shownWidth_, ' ') << '\r' << std::flush;
  shownWidth_ = 0;
}

}  // namespace loom::cli
