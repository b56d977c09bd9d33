#include "blob_codec.h"

#include <zstd.h>

#include <memory>

#include "loom/util/error.h"

namespace loom::content::detail {
namespace {

constexpr int kLevel = 1;                       // fast: a put is on the step's path
constexpr std::size_t kSmallest = 128;          // below this a frame's header eats the saving
constexpr int64_t kLargest = int64_t{1} << 30;  // SQLite's own limit on a value is 1e9 bytes

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

}  // namespace

EncodedBlob encodeBlob(std::string_view bytes) {
  if (bytes.size() < kSmallest) return {};
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx(ZSTD_createCCtx());
  if (!cctx) return {};  // out of memory: keep it raw
  // Room for a frame worth keeping only: one that does not fit is kept raw.
  std::string frame(bytes.size() / 10 * 9, '\0');
  std::size_t n =
      ZSTD_compressCCtx(cctx.get(), frame.data(), frame.size(), bytes.data(), bytes.size(), kLevel);
  if (ZSTD_isError(n)) return {};
  frame.resize(n);
  return {BlobEncoding::kZstd, std::move(frame)};
}

std::string decodeBlob(std::string_view stored, int64_t encoding, int64_t size,
                       const std::string& what) {
  // A frame is kept only when it saves a tenth, so bytes as long as the blob are the blob itself
  // (a schema-1 writer re-put the row without resetting its encoding); the address check still
  // guards them.
  if (encoding == static_cast<int64_t>(BlobEncoding::kRaw) ||
      static_cast<int64_t>(stored.size()) == size) {
    return std::string(stored);
  }
  if (encoding != static_cast<int64_t>(BlobEncoding::kZstd)) {
    throw DataLossError(what + " is stored with encoding " + std::to_string(encoding) +
                        ", which this build does not know; upgrade Loom or put the blob again");
  }
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) throw UnavailableError("out of memory decoding " + what);
  unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (size < 0 || size > kLargest || declared != static_cast<unsigned long long>(size)) {
    throw DataLossError(
        what + " is a corrupt zstd frame (it declares " +
        (declared >= ZSTD_CONTENTSIZE_ERROR ? std::string("no size") : std::to_string(declared)) +
        ", the row " + std::to_string(size) + " bytes); put the blob again");
  }
  std::string bytes(static_cast<std::size_t>(size), '\0');
  std::size_t n =
      ZSTD_decompressDCtx(dctx.get(), bytes.data(), bytes.size(), stored.data(), stored.size());
  if (ZSTD_isError(n) || n != bytes.size()) {
    throw DataLossError(what + " is a corrupt zstd frame" +
                        (ZSTD_isError(n) ? std::string(" (") + ZSTD_getErrorName(n) + ")" : "") +
                        "; put the blob again");
  }
  return bytes;
}

}  // namespace loom::content::detail
