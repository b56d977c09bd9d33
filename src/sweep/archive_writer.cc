// ArchiveWriter: streams executions into zstd blocks of a temp file in the store's staging
// folder, then writes the index and footer, fsyncs and publishes it (layout: archive_format.h,
// docs/spec/archive-segment.md).
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>

#include "archive_format.h"
#include "loom/sweep/archive.h"
#include "loom/util/error.h"
#include "util/io_error.h"
#include "util/posix_file.h"
#include "util/private_files.h"

namespace loom::sweep {

namespace fs = std::filesystem;

namespace {

// "2026-11-29T10:00:00.123Z" -> "20261129T100000123Z": sortable and safe in a file name.
std::string compactTimestamp(int64_t millis) {
  std::string out;
  for (char c : formatTimestamp(millis)) {
    if (c != '-' && c != ':' && c != '.') out.push_back(c);
  }
  return out;
}

std::string randomHex8() {
  uint32_t r = std::random_device{}();
  unsigned char bytes[4] = {static_cast<unsigned char>(r), static_cast<unsigned char>(r >> 8),
                            static_cast<unsigned char>(r >> 16),
                            static_cast<unsigned char>(r >> 24)};
  return format::toHex(bytes, 4);
}

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

}  // namespace

struct ArchiveWriter::Impl {
  std::shared_ptr<ArchiveStore> store;
  fs::path dir;  // the store's staging folder
  ArchiveWriterOptions options;
  int64_t createdAt = 0;
  std::string name;
  fs::path tempPath;
  format::Fd fd;
  int64_t offset = 0;  // where the next byte goes
  std::set<std::string> ids;
  std::string index;  // JSON lines, one per execution
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx;
  std::string out;  // compressor output buffer
  bool broken = false;
  bool finished = false;

  void checkUsable() const {
    if (finished)
      throw FailedPreconditionError("archive segment '" + store->locate(name) +
                                    "' is finished; start a new ArchiveWriter");
    if (broken)
      throw FailedPreconditionError("archive segment '" + tempPath.string() +
                                    "' failed earlier and will not be finished");
  }

  void check(std::size_t rc, std::string_view op) const {
    if (ZSTD_isError(rc)) {
      throw InternalError("archive segment '" + tempPath.string() + "': zstd " + std::string(op) +
                          " failed: " + ZSTD_getErrorName(rc));
    }
  }

  // Compresses `bytes` (or ends the frame when `end`), writing and hashing whatever comes out.
  void compress(std::string_view bytes, bool end, format::Checksum& sum) {
    ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
    for (;;) {
      ZSTD_outBuffer o{out.data(), out.size(), 0};
      std::size_t remaining =
          ZSTD_compressStream2(cctx.get(), &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
      check(remaining, "compression");
      if (o.pos > 0) {
        std::string_view chunk(out.data(), o.pos);
        posix::writeAll(fd.get(), chunk, tempPath);
        sum.update(chunk);
        offset += static_cast<int64_t>(o.pos);
      }
      if (end ? remaining == 0 : in.pos == in.size) return;
    }
  }

  void addBlock(const kernel::ExecutionInfo& info, const EventSource& source) {
    int64_t start = offset;
    int64_t rawLength = 0;
    int64_t events = 0;
    format::Checksum sum;
    check(ZSTD_CCtx_reset(cctx.get(), ZSTD_reset_session_only), "reset");
    std::string text;
    source([&](const kernel::Event& e) {
      if (e.seq != events + 1) {
        throw InvalidArgumentError("execution '" + info.id + "' gave event seq " +
                                   std::to_string(e.seq) + " where seq " +
                                   std::to_string(events + 1) + " belongs; not archived");
      }
      text = kernel::toText(e);
      text.push_back('\n');  // stored texts are compact JSON: no raw newline inside
      compress(text, false, sum);
      rawLength += static_cast<int64_t>(text.size());
      ++events;
    });
    if (events != info.nextSeq - 1) {
      throw InvalidArgumentError("execution '" + info.id + "' has " + std::to_string(events) +
                                 " events but its metadata counts " +
                                 std::to_string(info.nextSeq - 1) +
                                 " (its log changed while archived); not archived");
    }
    compress({}, true, sum);
    json::object entry{{"id", info.id},
                       {"offset", start},
                       {"length", offset - start},
                       {"rawLength", rawLength},
                       {"events", events},
                       {"checksum", sum.hex()},
                       {"info", format::infoToJson(info)}};
    json::appendText(index, entry);
    index.push_back('\n');
  }

  std::string header(uint64_t count) const {
    std::string h(format::kHeaderBytes, '\0');
    std::memcpy(h.data(), format::kMagic.data(), format::kMagic.size());
    format::putU32(h.data() + 8, kArchiveFormatVersion);
    format::putU32(h.data() + 12, 0);
    format::putU64(h.data() + 16, static_cast<uint64_t>(createdAt));
    format::putU64(h.data() + 24, count);
    return h;
  }
};

ArchiveWriter::ArchiveWriter(fs::path dir, ArchiveWriterOptions options)
    : ArchiveWriter(folderArchiveStore(std::move(dir)), std::move(options)) {}

ArchiveWriter::ArchiveWriter(std::shared_ptr<ArchiveStore> store, ArchiveWriterOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.store = std::move(store);
  m.dir = m.store->stagingDir();
  m.options = std::move(options);
  if (m.options.compressionLevel < 1 || m.options.compressionLevel > ZSTD_maxCLevel()) {
    throw InvalidArgumentError("archive compression level " +
                               std::to_string(m.options.compressionLevel) + " is not in 1.." +
                               std::to_string(ZSTD_maxCLevel()));
  }
  std::error_code ec;
  fs::create_directories(m.dir, ec);
  if (!ec) restrictToOwner(m.dir);  // archived subjects' data: owner only
  if (ec) {
    throw UnavailableError("archive folder '" + m.dir.string() +
                           "' cannot be created: " + ec.message());
  }
  m.createdAt = m.options.clock->nowMillis();
  std::string stem = "segment-" + compactTimestamp(m.createdAt) + "-" + randomHex8();
  m.name = stem + std::string(kSegmentExtension);
  m.tempPath = m.dir / ("." + stem + ".tmp");
  m.fd = format::Fd(::open(m.tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (m.fd.get() < 0) {
    throwIoError(errno, "archive segment '" + m.tempPath.string() + "': create");
  }
  m.cctx.reset(ZSTD_createCCtx());
  if (!m.cctx) throw InternalError("zstd: out of memory creating a compression context");
  m.check(ZSTD_CCtx_setParameter(m.cctx.get(), ZSTD_c_compressionLevel, m.options.compressionLevel),
          "set level");
  m.check(ZSTD_CCtx_setParameter(m.cctx.get(), ZSTD_c_checksumFlag, 1), "set checksum");
  m.out.resize(ZSTD_CStreamOutSize());
  posix::writeAll(m.fd.get(), m.header(0), m.tempPath);  // the count is written by finish()
  m.offset = static_cast<int64_t>(format::kHeaderBytes);
}

ArchiveWriter::~ArchiveWriter() {
  if (impl_ && !impl_->finished) {
    impl_->fd = format::Fd();
    std::error_code ec;  // best effort: a leftover temp file is never taken for a segment
    fs::remove(impl_->tempPath, ec);
  }
}

void ArchiveWriter::add(const kernel::ExecutionInfo& info, const EventSource& source) {
  Impl& m = *impl_;
  m.checkUsable();
  if (info.id.empty()) throw InvalidArgumentError("an execution without an id cannot be archived");
  if (m.ids.count(info.id) != 0) {
    throw InvalidArgumentError("execution '" + info.id + "' was added to this segment already");
  }
  try {
    m.addBlock(info, source);
  } catch (...) {
    m.broken = true;  // a partial block is in the file: this segment must never be finished
    throw;
  }
  m.ids.insert(info.id);
}

void ArchiveWriter::add(const kernel::ExecutionInfo& info,
                        const std::vector<kernel::Event>& events) {
  add(info, [&](const std::function<void(const kernel::Event&)>& sink) {
    for (const auto& e : events) sink(e);
  });
}

int64_t ArchiveWriter::count() const { return static_cast<int64_t>(impl_->ids.size()); }

std::string ArchiveWriter::finish() {
  Impl& m = *impl_;
  m.checkUsable();
  try {
    int64_t indexOffset = m.offset;
    posix::writeAll(m.fd.get(), m.index, m.tempPath);
    std::string header = m.header(m.ids.size());
    posix::pwriteAll(m.fd.get(), header, 0, m.tempPath);
    format::Checksum sum;
    sum.update(header);
    sum.update(m.index);
    auto digest = sum.digest();
    std::string footer(format::kFooterBytes, '\0');
    format::putU64(footer.data(), static_cast<uint64_t>(indexOffset));
    format::putU64(footer.data() + 8, m.index.size());
    std::memcpy(footer.data() + 16, digest.data(), digest.size());
    std::memcpy(footer.data() + 16 + format::kChecksumBytes, format::kFooterMagic.data(),
                format::kFooterMagic.size());
    posix::writeAll(m.fd.get(), footer, m.tempPath);
    posix::syncFile(m.fd.get(), m.tempPath);
    if (::close(m.fd.release()) != 0) {
      throwIoError(errno, "archive segment '" + m.tempPath.string() + "': close");
    }
    m.store->publish(m.tempPath, m.name);
    m.finished = true;  // the temp file is gone; what is left is a whole segment
  } catch (...) {
    m.broken = true;  // the caller must not count on this segment (nothing under its name
                      // unless the publish happened, and then it is whole)
    throw;
  }
  return m.name;
}

}  // namespace loom::sweep
