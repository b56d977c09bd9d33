#include "util/io_error.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "loom/util/error.h"

namespace loom {
namespace {

ErrorCode codeOf(int err, std::string* message = nullptr) {
  try {
    throwIoError(err, "archive segment '/a/b.seg': write");
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return ErrorCode::kInternal;
}

TEST(IoError, EachErrnoMapsToWhatTheCallerShouldDo) {
  std::string message;
  EXPECT_EQ(codeOf(ENOSPC, &message), ErrorCode::kUnavailable);
  EXPECT_EQ(message,
            "archive segment '/a/b.seg': write failed: No space left on device (errno 28); "
            "free disk space, then retry");
  EXPECT_EQ(codeOf(EINTR), ErrorCode::kUnavailable);
  EXPECT_EQ(codeOf(EACCES), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(codeOf(EROFS), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(codeOf(EIO), ErrorCode::kUnavailable);  // the disk failed: retry, the run resumes
  EXPECT_EQ(codeOf(EINVAL), ErrorCode::kInternal);
}

}  // namespace
}  // namespace loom
