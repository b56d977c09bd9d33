// ArchiveSegment (validating reader) and Archive (every segment of a store). Layout:
// archive_format.h, docs/spec/archive-segment.md.
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "archive_format.h"
#include "loom/sweep/archive.h"
#include "loom/util/error.h"

namespace loom::sweep {

namespace fs = std::filesystem;

namespace {

struct Entry {
  kernel::ExecutionInfo info;
  int64_t offset = 0;
  int64_t length = 0;
  int64_t rawLength = 0;
  int64_t events = 0;
  std::string checksum;  // hex
};

struct DCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

ZSTD_DCtx* threadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) throw InternalError("zstd: out of memory creating a decompression context");
  return dctx.get();
}

bool isHex64(std::string_view s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Entry entryFromJson(const json::object& o, int64_t indexOffset) {
  Entry e;
  std::string id(json::requireString(o, "id"));
  e.offset = json::requireInt(o, "offset");
  e.length = json::requireInt(o, "length");
  e.rawLength = json::requireInt(o, "rawLength");
  e.events = json::requireInt(o, "events");
  e.checksum = json::requireString(o, "checksum");
  e.info = format::infoFromJson(json::requireObject(o, "info"));
  if (e.offset < static_cast<int64_t>(format::kHeaderBytes) || e.length <= 0 ||
      e.length > indexOffset - e.offset) {
    throw InvalidArgumentError("block of '" + id + "' at offset " + std::to_string(e.offset) +
                               " (" + std::to_string(e.length) +
                               " bytes) is not between the header and the index");
  }
  if (e.rawLength < 0 || e.events < 0) {
    throw InvalidArgumentError("'" + id + "' has a negative length or event count");
  }
  if (!isHex64(e.checksum)) throw InvalidArgumentError("'" + id + "' has a malformed checksum");
  if (e.info.id != id) {
    throw InvalidArgumentError("entry '" + id + "' holds the metadata of '" + e.info.id + "'");
  }
  if (e.events != e.info.nextSeq - 1) {
    throw InvalidArgumentError("'" + id + "' holds " + std::to_string(e.events) +
                               " events but its metadata counts " +
                               std::to_string(e.info.nextSeq - 1));
  }
  return e;
}

}  // namespace

struct ArchiveSegment::Impl {
  std::string name;
  std::string location;  // ArchiveStore::locate(name)
  std::unique_ptr<SegmentBytes> bytes;
  int64_t fileBytes = 0;
  uint32_t version = 0;
  int64_t createdAt = 0;
  std::vector<Entry> entries;  // ordered by id
  std::map<std::string, std::size_t, std::less<>> byId;

  [[noreturn]] void corrupt(const std::string& what) const {
    throw DataLossError("archive segment '" + location + "' " + what);
  }
  // A damaged block: the segment's other runs still read, and the runs it holds may be whole
  // elsewhere (rearchived by a later retention run), so the remedy names both ways out.
  [[noreturn]] void corruptBlock(const std::string& what) const {
    corrupt(what +
            "; restore the segment from a backup, or, when every run it holds is whole in "
            "another segment or its live log, retire it with `loom retention supersede " +
            name + "`");
  }

  void readHeaderAndIndex() {
    std::string header;
    if (fileBytes >= static_cast<int64_t>(format::kMagic.size())) {
      header = bytes->read(0, std::min<int64_t>(fileBytes, format::kHeaderBytes), "the header");
      if (std::string_view(header).substr(0, 8) != format::kMagic) {
        corrupt("is not an archive segment: wrong magic (its first bytes are " +
                format::toHex(reinterpret_cast<const unsigned char*>(header.data()), 8) + ")");
      }
    }
    constexpr auto kMinBytes = static_cast<int64_t>(format::kHeaderBytes + format::kFooterBytes);
    if (fileBytes < kMinBytes) {
      corrupt("is truncated: " + std::to_string(fileBytes) +
              " bytes, fewer than a header and a footer (" + std::to_string(kMinBytes) + ")");
    }
    version = format::getU32(header.data() + 8);
    if (version > kArchiveFormatVersion || version < kArchiveFormatOldestReadable) {
      throw FailedPreconditionError(
          "archive segment '" + location + "' is in archive format version " +
          std::to_string(version) + "; this build reads versions " +
          std::to_string(kArchiveFormatOldestReadable) + " to " +
          std::to_string(kArchiveFormatVersion) +
          (version > kArchiveFormatVersion ? "; upgrade Loom to read it" : ""));
    }
    if (format::getU32(header.data() + 12) != 0) corrupt("has a damaged header (reserved bytes)");
    createdAt = static_cast<int64_t>(format::getU64(header.data() + 16));
    uint64_t count = format::getU64(header.data() + 24);

    std::string footer =
        bytes->read(fileBytes - format::kFooterBytes, format::kFooterBytes, "the footer");
    if (std::string_view(footer).substr(16 + format::kChecksumBytes) != format::kFooterMagic) {
      corrupt("has no footer at its end: it is truncated or damaged");
    }
    uint64_t indexOffset = format::getU64(footer.data());
    uint64_t indexLength = format::getU64(footer.data() + 8);
    auto end = static_cast<uint64_t>(fileBytes - format::kFooterBytes);
    if (indexOffset < format::kHeaderBytes || indexOffset > end ||
        indexLength != end - indexOffset) {
      corrupt("has a footer pointing outside the file (index at " + std::to_string(indexOffset) +
              ", " + std::to_string(indexLength) + " bytes; file " + std::to_string(fileBytes) +
              " bytes): it is truncated or damaged");
    }
    std::string index = bytes->read(static_cast<int64_t>(indexOffset), indexLength, "the index");
    format::Checksum sum;
    sum.update(header);
    sum.update(index);
    auto digest = sum.digest();
    if (std::memcmp(digest.data(), footer.data() + 16, format::kChecksumBytes) != 0) {
      corrupt("fails its header and index checksum: it is damaged");
    }
    parseIndex(index, static_cast<int64_t>(indexOffset));
    if (entries.size() != count) {
      corrupt("has " + std::to_string(entries.size()) + " index entries but its header counts " +
              std::to_string(count));
    }
  }

  void parseIndex(std::string_view index, int64_t indexOffset) {
    std::size_t line = 0;
    while (!index.empty()) {
      ++line;
      std::size_t nl = index.find('\n');
      if (nl == std::string_view::npos) corrupt("has an index whose last line is unterminated");
      try {
        json::value v = json::parseStored(index.substr(0, nl), "entry");
        if (!v.is_object()) throw InvalidArgumentError("not a JSON object");
        Entry e = entryFromJson(v.get_object(), indexOffset);
        if (byId.count(e.info.id) != 0) {
          throw InvalidArgumentError("a second entry for '" + e.info.id + "'");
        }
        byId.emplace(e.info.id, entries.size());
        entries.push_back(std::move(e));
      } catch (const InvalidArgumentError& e) {
        corrupt("has a bad index entry (line " + std::to_string(line) + "): " + e.what());
      }
      index.remove_prefix(nl + 1);
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.info.id < b.info.id; });
    for (std::size_t i = 0; i < entries.size(); ++i) byId[entries[i].info.id] = i;
  }

  // Streams the frame out, never holding more than `rawLength` bytes: a frame that would
  // yield more, less, or has bytes after its end is damaged.
  std::string decompress(std::string_view compressed, int64_t rawLength,
                         const std::string& where) const {
    ZSTD_DCtx* dctx = threadDCtx();
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    std::string raw;
    raw.reserve(static_cast<std::size_t>(std::min<int64_t>(rawLength, 64 << 20)));
    std::string chunk(ZSTD_DStreamOutSize(), '\0');
    ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
    std::size_t rc = 1;
    while (rc != 0) {
      ZSTD_outBuffer out{chunk.data(), chunk.size(), 0};
      rc = ZSTD_decompressStream(dctx, &out, &in);
      if (ZSTD_isError(rc)) {
        corruptBlock("has a " + where + " that does not decompress: " + ZSTD_getErrorName(rc));
      }
      if (static_cast<int64_t>(raw.size() + out.pos) > rawLength) {
        corruptBlock("has a " + where + " that decompresses to more than its " +
                     std::to_string(rawLength) + " bytes");
      }
      raw.append(chunk.data(), out.pos);
      if (rc != 0 && in.pos == in.size && out.pos < out.size) {
        corruptBlock("has a " + where + " whose zstd frame is cut short");
      }
    }
    if (in.pos != in.size || static_cast<int64_t>(raw.size()) != rawLength) {
      corruptBlock("has a " + where + " of " + std::to_string(raw.size()) +
                   " bytes where its index says " + std::to_string(rawLength) +
                   (in.pos != in.size ? ", with bytes after its frame" : ""));
    }
    return raw;
  }

  // Checks the block's checksum, then parses its events one at a time into `visit`.
  void visitBlock(const Entry& e, const std::function<void(kernel::Event&&)>& visit) const {
    const std::string& id = e.info.id;
    std::string where = "block of execution '" + id + "' at offset " + std::to_string(e.offset);
    std::string compressed = bytes->read(e.offset, static_cast<std::size_t>(e.length), where);
    format::Checksum sum;
    sum.update(compressed);
    if (sum.hex() != e.checksum) corruptBlock("has a damaged " + where + ": checksum mismatch");
    std::string raw = decompress(compressed, e.rawLength, where);
    compressed = std::string();
    int64_t seq = 0;
    std::string_view rest(raw);
    while (!rest.empty()) {
      std::size_t nl = rest.find('\n');
      if (nl == std::string_view::npos || seq >= e.events) {
        corruptBlock("has a " + where + " with more text than its " + std::to_string(e.events) +
                     " events");
      }
      visit(kernel::eventFromText(id, ++seq, rest.substr(0, nl)));
      rest.remove_prefix(nl + 1);
    }
    if (seq != e.events) {
      corruptBlock("has a " + where + " with " + std::to_string(seq) +
                   " events where its index counts " + std::to_string(e.events));
    }
  }

  ArchivedExecution readBlock(const Entry& e) const {
    ArchivedExecution out;
    out.info = e.info;
    out.events.reserve(static_cast<std::size_t>(e.events));
    visitBlock(e, [&](kernel::Event&& event) { out.events.push_back(std::move(event)); });
    return out;
  }
};

ArchiveSegment::ArchiveSegment(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ArchiveSegment::~ArchiveSegment() = default;
ArchiveSegment::ArchiveSegment(ArchiveSegment&&) noexcept = default;
ArchiveSegment& ArchiveSegment::operator=(ArchiveSegment&&) noexcept = default;

ArchiveSegment ArchiveSegment::open(const ArchiveStore& store, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  impl->location = store.locate(name);
  impl->bytes = store.open(name);
  impl->fileBytes = impl->bytes->size();
  impl->readHeaderAndIndex();
  return ArchiveSegment(std::move(impl));
}

ArchiveSegment ArchiveSegment::open(const fs::path& path) {
  return open(*folderArchiveStore(path.parent_path()), path.filename().string());
}

const std::string& ArchiveSegment::name() const { return impl_->name; }
const std::string& ArchiveSegment::location() const { return impl_->location; }
uint32_t ArchiveSegment::formatVersion() const { return impl_->version; }
int64_t ArchiveSegment::createdAtMillis() const { return impl_->createdAt; }
int64_t ArchiveSegment::fileBytes() const { return impl_->fileBytes; }

std::vector<kernel::ExecutionInfo> ArchiveSegment::listExecutions() const {
  std::vector<kernel::ExecutionInfo> out;
  out.reserve(impl_->entries.size());
  for (const auto& e : impl_->entries) out.push_back(e.info);
  return out;
}

bool ArchiveSegment::contains(const std::string& executionId) const {
  return impl_->byId.count(executionId) != 0;
}

std::optional<ArchivedExecution> ArchiveSegment::read(const std::string& executionId) const {
  auto it = impl_->byId.find(executionId);
  if (it == impl_->byId.end()) return std::nullopt;
  return impl_->readBlock(impl_->entries[it->second]);
}

bool ArchiveSegment::forEachEventOf(const std::string& executionId,
                                    const std::function<void(const kernel::Event&)>& visit) const {
  auto it = impl_->byId.find(executionId);
  if (it == impl_->byId.end()) return false;
  impl_->visitBlock(impl_->entries[it->second], [&](kernel::Event&& event) { visit(event); });
  return true;
}

void ArchiveSegment::forEachExecution(
    const std::function<void(const ArchivedExecution&)>& visit) const {
  for (const auto& e : impl_->entries) visit(impl_->readBlock(e));
}

void ArchiveSegment::forEachEvent(const ArchiveEventVisitor& visit) const {
  forEachExecution([&](const ArchivedExecution& x) {
    for (const auto& event : x.events) visit(x.info.id, event);
  });
}

Archive::Archive(std::shared_ptr<const ArchiveStore> store, std::set<std::string> retired)
    : store_(std::move(store)), retired_(std::move(retired)) {}
Archive::Archive(fs::path dir) : store_(folderArchiveStore(std::move(dir))) {}

std::vector<std::string> Archive::segmentNames() const {
  std::vector<std::string> names = store_->segmentNames();
  std::erase_if(names, [this](const std::string& name) { return retired_.contains(name); });
  return names;
}

ArchiveSegment Archive::openSegment(const std::string& name) const {
  return ArchiveSegment::open(*store_, name);
}

void Archive::forEachSegment(const std::function<void(const ArchiveSegment&)>& visit) const {
  for (const auto& name : segmentNames()) visit(openSegment(name));
}

std::optional<ArchivedExecution> Archive::find(const std::string& executionId) const {
  auto names = segmentNames();
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    ArchiveSegment segment = openSegment(*it);
    if (segment.contains(executionId)) return segment.read(executionId);
  }
  return std::nullopt;
}

void Archive::forEachEvent(const ArchiveEventVisitor& visit) const {
  forEachSegment([&](const ArchiveSegment& segment) { segment.forEachEvent(visit); });
}

}  // namespace loom::sweep
