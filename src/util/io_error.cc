#include "io_error.h"

#include <cerrno>
#include <cstring>

#include "loom/util/error.h"

namespace loom {

void throwIoError(int err, const std::string& what) {
  std::string message =
      what + " failed: " + std::strerror(err) + " (errno " + std::to_string(err) + ")";
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      throw UnavailableError(message + "; free disk space, then retry");
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case EINTR:
    case EAGAIN:
    case EBUSY:
      throw UnavailableError(message + "; retry");
    case EACCES:
    case EPERM:
      throw FailedPreconditionError(message + "; give this process write access to the folder");
    case EROFS:
      throw FailedPreconditionError(message +
                                    "; the file system is read-only (a disk error may have made "
                                    "the kernel remount it so: check the kernel log, dmesg)");
    case EIO:  // the disk's failure, not the data's loss; after a failed fsync the outcome of
               // the write it was to make durable is unknown, so the message claims nothing
      throw UnavailableError(message +
                             "; the disk reported an I/O error: check it and the kernel log "
                             "(dmesg), then retry");
    default:
      throw InternalError(message);
  }
}

}  // namespace loom
