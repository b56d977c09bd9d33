// How the SQLite content store keeps a blob's bytes in its row (content schema 2): as they are
// (kRaw) or as one zstd frame (kZstd) when that saves at least a tenth of them. The address
// and the size always describe the bytes themselves. docs/spec/content-store.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace loom::content::detail {

enum class BlobEncoding : int64_t { kRaw = 0, kZstd = 1 };

struct EncodedBlob {
  BlobEncoding encoding = BlobEncoding::kRaw;
  std::string stored;  // empty for kRaw: store the bytes themselves
};

// The smaller way to keep `bytes`: kZstd (level 1) when the frame is at most 90% of them.
EncodedBlob encodeBlob(std::string_view bytes);

// The bytes of a row. Throws DataLossError, naming `what`, for an unknown encoding, a frame
// that does not decode, or one that does not decode to exactly `size` bytes.
std::string decodeBlob(std::string_view stored, int64_t encoding, int64_t size,
                       const std::string& what);

}  // namespace loom::content::detail
