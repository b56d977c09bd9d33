#include "loom/workflow/code_version.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "loom/content/content_store.h"

namespace loom::workflow {

namespace {

struct BuildIdSearch {
  const void* address;  // an address inside the object wanted
  std::string hex;      // its build id, once found
  std::string file;     // its file name ("" for the main executable)
};

std::string toHex(const unsigned char* bytes, std::size_t n) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    out += kDigits[bytes[i] >> 4];
    out += kDigits[bytes[i] & 0xf];
  }
  return out;
}

// The NT_GNU_BUILD_ID note of the object `info` describes, when it holds search->address.
int findBuildId(struct dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<BuildIdSearch*>(data);
  auto wanted = reinterpret_cast<ElfW(Addr)>(search->address);
  bool holds = false;
  for (int i = 0; i < info->dlpi_phnum && !holds; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    ElfW(Addr) start = info->dlpi_addr + ph.p_vaddr;
    holds = ph.p_type == PT_LOAD && wanted >= start && wanted < start + ph.p_memsz;
  }
  if (!holds) return 0;
  search->file = info->dlpi_name != nullptr ? info->dlpi_name : "";
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* at = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = at + ph.p_memsz;
    while (at + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(at);
      const unsigned char* name = at + sizeof(ElfW(Nhdr));
      const unsigned char* desc = name + ((note->n_namesz + 3) & ~3U);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0 && desc + note->n_descsz <= end) {
        search->hex = toHex(desc, note->n_descsz);
        return 1;
      }
      at = desc + ((note->n_descsz + 3) & ~3U);
    }
  }
  return 1;  // the object, without a build id
}

std::string readWhole(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw NotFoundError("cannot read " + file.string() +
                        " to compute the code version (restore it, or declare a version)");
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string computeProgramVersion() {
  BuildIdSearch search{reinterpret_cast<const void*>(&programCodeVersion), {}, {}};
  dl_iterate_phdr(findBuildId, &search);
  if (!search.hex.empty()) return "build:" + search.hex;
  std::filesystem::path file = search.file.empty() ? "/proc/self/exe" : search.file;
  return filesCodeVersion("build:", {file});
}

}  // namespace

const std::string& programCodeVersion() {
  static const std::string version = computeProgramVersion();
  return version;
}

std::string filesCodeVersion(std::string_view prefix,
                             const std::vector<std::filesystem::path>& files,
                             const std::filesystem::path& base) {
  std::string all;
  for (const auto& file : files) {
    std::string bytes = readWhole(file);
    std::string name = base.empty() ? file.string() : file.lexically_relative(base).string();
    all += name + '\0' + std::to_string(bytes.size()) + '\0' + bytes;
  }
  return std::string(prefix) + content::sha256Hex(all).substr(0, 32);
}

VersionMismatchError::VersionMismatchError(const std::string& executionId,
                                           const std::string& recorded, const std::string& current)
    : FailedPreconditionError(
          "execution '" + executionId + "' started on code version " + recorded +
          " and this code is version " + current +
          "; a run continues only on the code it started on (runs are pinned to their "
          "version): put that code back (for an agent app, the app file and the files it names "
          "in its folder; for a program, the build that started it) and run the command again, "
          "or start a new run on this code. `loom state " + executionId +
          "` shows the version a run recorded"),
      recorded_(recorded),
      current_(current) {}

}  // namespace loom::workflow
