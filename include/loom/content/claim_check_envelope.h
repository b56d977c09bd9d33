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

// Parses a well-formed envelope; nullopt when `v` is not one (a malformed look-alike is not
// an envelope). Does not look through a taint wrapper.
std::optional<ClaimCheckEnvelope> parseEnvelope(const json::value& v);

}  // namespace loom::content
