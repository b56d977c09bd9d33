// What the commands that run other `loom` commands as child processes share (`loom worker`'s
// `loom resume` children, `loom serve`'s operations): this binary's path, scratch files for a
// child's output, and reading them back. Thread-safe: free functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/unique_fd.h"

namespace loom {

// This binary (/proc/self/exe): the one its children run. `who` names the caller in the
// UnavailableError thrown when it cannot be found.
std::string thisProgram(std::string_view who);

// A file for a child's output, already unlinked and close-on-exec: read back once the child
// has exited (a child that outlives the read writes on harmlessly).
UniqueFd scratchFile(std::string_view who);

// Up to `limit` bytes of `fd` from its start, trailing newlines dropped.
std::string readBack(int fd, std::size_t limit);

}  // namespace loom
