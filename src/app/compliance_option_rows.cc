#include "compliance_option_rows.h"

#include "option_row_support.h"

namespace loom::app {
namespace {

compliance::KeysConfig& keys(Config& c) {
  if (!c.security.keys) c.security.keys.emplace();
  return *c.security.keys;
}

}  // namespace

void addSecurityKeyRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addOptionRow(rows, "security.keys", OptionType::kTable,
                          "Where the master key comes from: it wraps the per-subject data keys "
                          "(kept in `<home>/loom.db`) and must never sit beside the data. Give "
                          "exactly one of `file` and `env`; the key is 64 hex digits (`loom "
                          "keys new-master` prints a fresh one). Required by compliance.erase "
                          "and security.crypto; a missing or wrong key stops boot.");
    r.set = [](Config& c, OptionValue) { keys(c); };
    r.show = [](const Config& c) {
      if (!c.security.keys) return std::string("off (unset)");
      return c.security.keys->env ? "env " + *c.security.keys->env
                                  : "file " + c.security.keys->file.value_or("?");
    };
  }
  {
    OptionRow& r = addOptionRow(rows, "security.keys.file", OptionType::kString,
                          "A file holding the master key (64 hex digits), mode 600, outside the "
                          "home: a file inside it is refused, since every copy or backup of the "
                          "home would carry it.");
    r.set = [](Config& c, OptionValue v) { keys(c).file = std::get<std::string>(v); };
  }
  {
    OptionRow& r = addOptionRow(rows, "security.keys.env", OptionType::kString,
                          "An environment variable holding the master key (64 hex digits), e.g. "
                          "LOOM_MASTER_KEY.");
    r.set = [](Config& c, OptionValue v) { keys(c).env = std::get<std::string>(v); };
  }
  {
    OptionRow& r = addOptionRow(rows, "security.crypto", OptionType::kTable,
                          "Encryption at rest for everything: the events, snapshots and "
                          "archive segments of every execution are sealed (XChaCha20-Poly1305), "
                          "those without a subject under a system key. With "
                          "execution.claimCheck the content store must seal its blobs too "
                          "(storage.contentStore.sealed = true), or boot refuses.");
    r.set = [](Config& c, OptionValue) { c.security.crypto = true; };
    r.show = [](const Config& c) { return std::string(c.security.crypto ? "on" : "off"); };
  }
  {
    OptionRow& r = addOptionRow(rows, "security.crypto.enabled", OptionType::kBoolean,
                          "Set false to keep the table but turn encryption at rest off.", "true");
    r.set = [](Config& c, OptionValue v) { c.security.crypto = std::get<bool>(v); };
  }
}

void addComplianceRows(std::vector<OptionRow>& rows) {
  {
    OptionRow& r = addOptionRow(rows, "compliance.erase", OptionType::kTable,
                          "Erasure of a data subject (GDPR Art. 17): the events of executions "
                          "run with `--subject` are sealed under that subject's key, so "
                          "`loom erase <subject>` shreds the key and deletes the subject's "
                          "offloaded blobs (docs/compliance.md). Needs security.keys and a "
                          "content store that can delete.");
    r.set = [](Config& c, OptionValue) { c.compliance.erase = true; };
    r.show = [](const Config& c) { return std::string(c.compliance.erase ? "on" : "off"); };
  }
  {
    OptionRow& r = addOptionRow(rows, "compliance.erase.enabled", OptionType::kBoolean,
                          "Set false to keep the table but turn erasure support off.", "true");
    r.set = [](Config& c, OptionValue v) { c.compliance.erase = std::get<bool>(v); };
  }
}

}  // namespace loom::app
