// Taint (ADR 0085): a marker on untrusted content, such as an MCP tool's result or A2A content
// nested inside a value. The wrapper is the JSON object
//   {"__loomTaint": {"origin": "<origin>"}, "value": <the untrusted value>}
// and, when one value carries content of several origins (a claim-check envelope standing for
// a result with nested wrappers of two origins), the same object with every origin listed:
//   {"__loomTaint": {"origin": "<first>", "origins": ["<first>", "<second>", ...]}, "value": ...}
// "origin" is always the first, so a reader that knows only "origin" still sees a tainted
// value (docs/spec/agent-state.md). The agent loop fences tainted content in the prompt and
// records where it came from; the claim-check never previews it; the content walker looks
// through exactly one wrapper at the top of a step output. Pure functions, thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "loom/json/json.h"

namespace loom::effects {

inline constexpr std::string_view kTaintKey = "__loomTaint";

// Wraps `value` as tainted from `origin` (e.g. "mcp:files").
json::value tainted(json::value value, std::string_view origin);
// Wraps `value` once as tainted from every one of `origins` (in order, duplicates dropped);
// one origin gives exactly tainted(value, origin). Throws InvalidArgumentError when `origins`
// is empty.
json::value tainted(json::value value, const std::vector<std::string>& origins);
// True when `v` itself is a taint wrapper (top level only).
bool isTainted(const json::value& v);
// The (first) origin of a top-level wrapper; nullopt when `v` is not one.
std::optional<std::string> taintOrigin(const json::value& v);
// The wrapped value of a top-level wrapper; `v` itself when it is not one.
const json::value& untainted(const json::value& v);
// True when a taint wrapper appears anywhere in `v` (top level or nested).
bool containsTaint(const json::value& v);
// The origins of every wrapper anywhere in `v` (each wrapper's "origin", then its "origins"),
// in document order, without duplicates.
std::vector<std::string> taintOrigins(const json::value& v);

}  // namespace loom::effects
