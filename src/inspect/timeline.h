// A run as the inspector shows it (docs/spec/http-api.md): its log grouped turn by turn (the
// model's message, each tool frame with its result or claim-check envelope, taint, failed
// attempts), its pending approvals, its token usage, and whether its log cites a blob. Each
// reads the log with EventStore::scan from a seq and stops at a page's end, so a page of a
// 10,000-turn run costs a page, not the run. Functions over a thread-safe store; no state but
// UsageTally's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"
#include "loom/kernel/event.h"
#include "loom/kernel/event_store.h"

namespace loom::inspect {

struct TimelinePage {
  json::array items;            // turns and run events, in log order
  std::optional<int64_t> next;  // the seq the next page starts at; nullopt at the log's end
};

// Up to `maxItems` items of execution `id`'s timeline, from the event at `fromSeq` on. An
// item is a turn (all steps of one agent turn), a workflow step (a run that is not an agent),
// or a run event (started, parked, signal, ended).
TimelinePage timelinePage(const kernel::EventStore& store, const std::string& id,
                          int64_t fromSeq, std::size_t maxItems);

// The parked run's pending approval, when it waits for one: {"execution", "workflow",
// "subject", "stepId", "signal", "tool", "arguments", "deadline"}.
std::optional<json::object> pendingApproval(const kernel::EventStore& store,
                                            const kernel::ExecutionInfo& info);

// Token usage of a run's model turns, tallied as the log grows (apply the events after
// `nextSeq` only).
struct UsageTally {
  int64_t startedAtMillis = 0;  // of the run tallied (an id reused after retention is another run)
  int64_t nextSeq = 1;
  int64_t inputTokens = 0;
  int64_t outputTokens = 0;
  int64_t modelTurns = 0;
  void apply(const kernel::Event& e);
  json::object toJson() const;
};

// The run's log and folded-state sizes as it grew, as `loom ls` measures them (logBytes,
// stateBytes), at most `maxPoints` points evenly spread over the log: {"seq", "turn" (the
// agent turn reached, 0 before the first), "logBytes", "stateBytes"}, the last point the log's
// end. One streamed pass; sizes are of the events as this store reads them (a sealed log
// read with keys measures its unsealed text).
json::array sizeSeries(const kernel::EventStore& store, const std::string& id,
                       std::size_t maxPoints);

// True when a recorded step output of execution `id` holds, where the claim-check middleware
// writes one, an envelope for `address` (ADR 0140 D11: a look-alike inside a result is data).
bool citesBlob(const kernel::EventStore& store, const std::string& id, std::string_view address);

}  // namespace loom::inspect
