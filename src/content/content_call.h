// The kinds of ContentStore calls, as counted by CountingContentStore and failed on purpose by
// FaultyContentStore. capabilities() is not a call to the store's data and has no kind.
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace loom::content {

enum class ContentCall {
  kPut,
  kGet,
  kHas,
  kRemove,
  kDeleteIfUntouchedSince,
  kTouchClock,
  kForEachBlob,
  kStat,
};

inline constexpr std::size_t kContentCallKinds = 8;
inline constexpr std::array<ContentCall, kContentCallKinds> kAllContentCalls = {
    ContentCall::kPut,
    ContentCall::kGet,
    ContentCall::kHas,
    ContentCall::kRemove,
    ContentCall::kDeleteIfUntouchedSince,
    ContentCall::kTouchClock,
    ContentCall::kForEachBlob,
    ContentCall::kStat};

// The method's name: "put", "get", "has", "remove", "deleteIfUntouchedSince", "touchClock",
// "forEachBlob", "stat".
std::string_view contentCallName(ContentCall call);
// Inverse of contentCallName; throws InvalidArgumentError naming the accepted names.
ContentCall contentCallFromName(std::string_view name);

}  // namespace loom::content
