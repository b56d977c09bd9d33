#include "content/content_call.h"

#include <string>

#include "loom/util/error.h"

namespace loom::content {

std::string_view contentCallName(ContentCall call) {
  switch (call) {
    case ContentCall::kPut:
      return "put";
    case ContentCall::kGet:
      return "get";
    case ContentCall::kHas:
      return "has";
    case ContentCall::kRemove:
      return "remove";
    case ContentCall::kDeleteIfUntouchedSince:
      return "deleteIfUntouchedSince";
    case ContentCall::kTouchClock:
      return "touchClock";
    case ContentCall::kForEachBlob:
      return "forEachBlob";
    case ContentCall::kStat:
      return "stat";
  }
  return "unknown";
}

ContentCall contentCallFromName(std::string_view name) {
  std::string accepted;
  for (ContentCall call : kAllContentCalls) {
    if (contentCallName(call) == name) return call;
    accepted += (accepted.empty() ? "" : ", ") + std::string(contentCallName(call));
  }
  throw InvalidArgumentError("unknown content store call '" + std::string(name) +
                             "': expected one of " + accepted);
}

}  // namespace loom::content
