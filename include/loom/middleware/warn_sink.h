// Where middleware reports what is worth an operator's attention but fails nothing (an
// abandoned timed-out call finishing late, a secret environment variable that is not set).
// Boot passes observability.onWarn; an empty sink writes "loom: warning: ..." to stderr.
// A sink may be called from any thread, so it must be thread-safe.
#pragma once

#include <functional>
#include <string_view>

namespace loom::middleware {

using WarnSink = std::function<void(std::string_view)>;

// Calls `sink` with `message`, or writes it to stderr when `sink` is empty.
void warn(const WarnSink& sink, std::string_view message);

}  // namespace loom::middleware
