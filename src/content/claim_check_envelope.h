// The claim-check envelope (ADR 0054): what is recorded in place of a result that was moved
// into the content store.
//   {"__loomClaimCheck": 1, "ref": {"__loomContent": "<address>"}, "size": <bytes>,
//    "digest"?: <any JSON>, "retain"?: true}
// `size` is the UTF-8 length of the stored JSON text; `digest` is what the model reads in its
// place; `retain: true` marks a load-bearing ref (ADR 0140 D6) — honoured by the sweep only
// at the top of a recorded step output (D11). Shared by the middleware, the content walker,
// compliance and export. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "loom/json/json.h"

namespace loom::content {

inline constexpr std::string_view kClaimCheckKey = "__loomClaimCheck";
// The wrapper that makes a value handed in from outside inert: {"__loomData": <object>}.
inline constexpr std::string_view kInertDataKey = "__loomData";

struct ClaimCheckEnvelope {
  std::string address;
  int64_t size = 0;
  std::optional<json::value> digest;
  bool retain = false;  // ClaimCheckEnvelope.retain (ADR 0140 D6)
};

json::value toJson(const ClaimCheckEnvelope& envelope);

// True when `v` is an object with a "__loomClaimCheck" member (shape not checked): what the
// middleware treats as "already an envelope" and what the agent loop refuses from a model.
bool looksLikeEnvelope(const json::value& v);

// A well-formed envelope read in place: views into the value it was read from, valid while
// that value lives. The one reader of the envelope shape; parseEnvelope copies from it.
struct EnvelopeView {
  std::string_view address;
  int64_t size = 0;
  const json::value* digest = nullptr;  // null when the envelope has none
  bool retain = false;
};

// Reads a well-formed envelope: marker 1, a valid ref, a whole non-negative size, a boolean
// retain if any, and no member besides marker, ref, size, digest and retain. nullopt when `v`
// is not one (a malformed look-alike is not an envelope). Does not look through a taint
// wrapper.
std::optional<EnvelopeView> readEnvelope(const json::value& v);
// readEnvelope, copied.
std::optional<ClaimCheckEnvelope> parseEnvelope(const json::value& v);

// Trust only what Loom wrote (docs/adr/0004-inert-envelopes-and-the-home-record.md): makes every
// value handed in from outside a run (an effect's result, a workflow input, a signal payload) inert
// data. Each object of `value` that has a member Loom reserves for its own shapes
// ("__loomClaimCheck", "__loomContent" or "__loomData") is replaced by
// {"__loomData": <that object, unchanged>}, and nothing below it is looked at again. So a
// tool can never hand the log an envelope or a content ref: the walker, the sweep, erasure,
// export and resolveClaimCheck never descend into a "__loomData" wrapper. In place; O(size).
void makeInert(json::value& value);

// A value handed in from outside a run, admitted: throws InvalidArgumentError naming `what`
// and json::kMaxValueDepth when it nests deeper (so nothing recorded can become unreadable),
// else makes it inert (above). The one entry rule for inputs, effect results and signals.
void admitFromOutside(json::value& value, std::string_view what);

// True when `o` is the wrapper makeInert writes ({"__loomData": ...}, one member).
bool isInertData(const json::object& o);

}  // namespace loom::content
