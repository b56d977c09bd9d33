// Helpers for tests that talk to a server of their own on 127.0.0.1.
#pragma once

#include <string>

namespace loom::testing {

// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick; another process may
// still take it before the caller binds it).
int freeLoopbackPort();

// Sends `bytes` on one connection to 127.0.0.1:`port` and returns all it answers until the
// server closes it (or 5 s pass); "" when nothing listens there.
std::string rawExchange(int port, const std::string& bytes);

// A path segment as a browser's encodeURIComponent sends it ('#' would end the path).
std::string encodedSegment(const std::string& segment);

}  // namespace loom::testing
