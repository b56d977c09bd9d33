// The one mapping of a failed system call's errno to a Loom error, for every module that does
// file I/O (the content stores, archive segments): out of space or of descriptors, or
// interrupted, or an I/O error: UnavailableError (retry, free space, check the disk); permission
// or a read-only filesystem: FailedPreconditionError (fix the folder);
// anything else: InternalError (a caller that expects a missing file checks ENOENT first). The
// message is `what` (the thing and the operation, e.g. "archive segment '/x.seg': fsync"), the
// system's text, the errno, and what to do.
#pragma once

#include <string>

namespace loom {

[[noreturn]] void throwIoError(int err, const std::string& what);

}  // namespace loom
