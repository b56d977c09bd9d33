// Every ContentStore implementation, instantiated over the conformance suite. Adding one is
// one line in the list below.
#include "content_store_conformance.h"
#include "loom/content/filesystem_content_store.h"
#include "loom/content/memory_content_store.h"
#include "loom/content/sqlite_content_store.h"

namespace loom::content::conformance {
namespace {

template <typename Store>
ContentStoreFactory factory(std::string name, bool persistent, std::string file = {}) {
  return {std::move(name),
          [file](const std::filesystem::path& dir,
                 std::shared_ptr<const Clock> clock) -> std::unique_ptr<ContentStore> {
            if constexpr (std::is_same_v<Store, MemoryContentStore>) {
              return std::make_unique<Store>(std::move(clock));
            } else {
              return std::make_unique<Store>((dir / file).string(), std::move(clock));
            }
          },
          persistent};
}

INSTANTIATE_TEST_SUITE_P(
    Stores, ContentStoreConformance,
    ::testing::Values(factory<MemoryContentStore>("Memory", false),
                      factory<FilesystemContentStore>("Filesystem", true, "content"),
                      factory<SqliteContentStore>("Sqlite", true, "content.db")),
    factoryName);

}  // namespace
}  // namespace loom::content::conformance
