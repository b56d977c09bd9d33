#include "content_option_rows.h"

#include "option_row_support.h"

namespace loom::app {

void addContentStorageRows(std::vector<OptionRow>& rows) {
  addOptionRow(rows, "storage.contentStore", OptionType::kTable,
               "The default content store: where claim-check blobs go and what `loom sweep` "
               "reclaims.");
  {
    OptionRow& r = addOptionRow(rows, "storage.contentStore.kind", OptionType::kString,
                                "`filesystem`: `<home>/blobs`, one file per blob (small blobs are "
                                "rows of `<home>/loom.db`: packBelowBytes); `sqlite`: "
                                "`<home>/content.db`; `memory`: in the process, lost at exit.",
                                "\"filesystem\"");
    r.allowed = {"filesystem", "sqlite", "memory"};
    r.set = [](Config& c, OptionValue v) {
      c.storage.contentStore.kind = std::get<std::string>(v);
    };
    r.get = [](const Config& c) { return OptionValue(c.storage.contentStore.kind); };
  }
  {
    OptionRow& r =
        addOptionRow(rows, "storage.contentStore.sealed", OptionType::kBoolean,
                     "Seal each blob under its subject's key (EncryptingContentStore, ADR "
                     "0143): equal bytes of two subjects get two addresses, and erasing a "
                     "subject leaves its blobs unreadable. Needs security.keys.",
                     "false");
    r.set = [](Config& c, OptionValue v) { c.storage.contentStore.sealed = std::get<bool>(v); };
    r.get = [](const Config& c) { return OptionValue(c.storage.contentStore.sealed); };
  }
  {
    OptionRow& r = addOptionRow(
        rows, "storage.contentStore.shared", OptionType::kBoolean,
        "More than one home uses this store on purpose. A home that finds its store used by "
        "another home (a claim in the store, or the store in that home's folder) refuses "
        "`loom sweep`, `loom erase` and `loom retention run` unless this is set; with it, "
        "they spare whatever any of those homes cites (docs/operations.md).",
        "false");
    r.set = [](Config& c, OptionValue v) { c.storage.contentStore.shared = std::get<bool>(v); };
    r.get = [](const Config& c) { return OptionValue(c.storage.contentStore.shared); };
  }
  {
    OptionRow& r = addOptionRow(rows, "storage.contentStore.path", OptionType::kString,
                                "Another location for the blobs (a folder, or the SQLite file).");
    r.set = [](Config& c, OptionValue v) {
      c.storage.contentStore.path = std::get<std::string>(v);
    };
    r.get = [](const Config& c) { return OptionValue(c.storage.contentStore.path); };
  }
  {
    OptionRow& r = addOptionRow(
        rows, "storage.contentStore.packBelowBytes", OptionType::kInteger,
        "With the `filesystem` store in the home: blobs smaller than this are rows of "
        "`<home>/loom.db`, flushed by the commit of the event that cites them instead of two "
        "flushes of their own (ADR 0014); larger ones are files in `<home>/blobs`. 0 writes "
        "every new blob as a file; packed blobs are read either way.",
        "1048576");
    r.min = 0;
    r.max = 256 << 20;
    r.set = [](Config& c, OptionValue v) {
      c.storage.contentStore.packBelowBytes = std::get<int64_t>(v);
    };
    r.get = [](const Config& c) { return OptionValue(c.storage.contentStore.packBelowBytes); };
  }
  {
    OptionRow& r = addOptionRow(rows, "storage.retention", OptionType::kTable,
                                "Discarding the logs of ended executions (`loom retention run`), "
                                "archived first by default (ADR 0138).");
    r.set = [](Config& c, OptionValue) {
      if (!c.storage.retention) c.storage.retention.emplace();
    };
    r.show = [](const Config& c) {
      return std::string(c.storage.retention ? "on" : "off (unset)");
    };
  }
  {
    OptionRow& r = addOptionRow(rows, "storage.retention.afterDays", OptionType::kInteger,
                                "Ended executions older than this many days are discarded.", "30");
    r.min = 0;
    r.max = 36500;
    r.set = [](Config& c, OptionValue v) {
      if (!c.storage.retention) c.storage.retention.emplace();
      c.storage.retention->afterDays = std::get<int64_t>(v);
    };
    r.get = [](const Config& c) {
      return OptionValue(c.storage.retention ? c.storage.retention->afterDays : int64_t{30});
    };
  }
  {
    OptionRow& r = addOptionRow(rows, "storage.retention.archive", OptionType::kBoolean,
                                "Write them to a read-only, compressed archive segment in "
                                "`<home>/archive` (with `storage.url`: in the server's archive "
                                "tables, which every machine reads) before removing their live "
                                "logs; archived blobs stay pinned.",
                                "true");
    r.set = [](Config& c, OptionValue v) {
      if (!c.storage.retention) c.storage.retention.emplace();
      c.storage.retention->archive = std::get<bool>(v);
    };
    r.get = [](const Config& c) {
      return OptionValue(c.storage.retention ? c.storage.retention->archive : true);
    };
  }
}

}  // namespace loom::app
