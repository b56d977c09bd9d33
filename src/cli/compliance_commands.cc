// `loom erase`, `loom export` and `loom keys new-master` (docs/compliance.md): erasure and
// export of a data subject, over the app configured with compliance.erase and security.keys.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/home_record.h"
#include "app/maintenance.h"
#include "command.h"
#include "home_lock.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/export.h"
#include "loom/compliance/key_store.h"
#include "loom/compliance/subject.h"
#include "loom/sweep/archive.h"
#include "util/posix_file.h"

namespace loom::cli {
namespace {

void addConfigOption(CLI::App& command, std::string& file) {
  command
      .add_option("--config", file,
                  "The loom.toml (or agent app) whose compliance.erase, security.keys and "
                  "storage options to use; its storage.home applies unless --home is given")
      ->type_name("FILE");
}

app::App& complianceApp(HomeSession& session, const std::string& config) {
  if (!config.empty()) session.loadConfig(config);
  app::App& app = session.app(false);
  if (app.keys() == nullptr) {
    throw FailedPreconditionError(
        "this home has no per-subject keys: pass --config with [security.keys] and "
        "[compliance.erase] (the file the runs were made with), see docs/compliance.md");
  }
  return app;
}

// Why the wired content store is not the one the home's runs offloaded to, if it is not.
std::optional<std::string> wrongStore(app::App& app) {
  return app::contentStoreMismatch(app.config(), *app.contentStore());
}

}  // namespace

Action setupErase(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string subject;
    std::string subjectHex;
    bool json = false;
    std::string config;
  };
  auto args = std::make_shared<Args>();
  auto* named = command.add_option("SUBJECT", args->subject, "The data subject to erase");
  auto* hex = command.add_option("--subject-hex", args->subjectHex,
                                 "The subject as the hex of its bytes (ff for the byte 0xFF): a "
                                 "subject an old home holds that is not UTF-8");
  named->excludes(hex);
  hex->excludes(named);
  command.add_flag("--json", args->json,
                   "Print {\"subject\", \"shredded\", \"contentDeleted\": {\"deleted\", "
                   "\"retained\", \"missing\", \"datedAhead\", \"datedAheadUntil\", "
                   "\"keptCitedElsewhere\"}} (retained: spared, put again while the erasure ran "
                   "or, datedAhead of them, dated after the store's clock until datedAheadUntil; "
                   "missing: already gone; keptCitedElsewhere: the addresses another subject's "
                   "run still cites)");
  addConfigOption(command, args->config);
  command.footer(
      "GDPR Art. 17. Before anything is destroyed, it collects every blob the subject's runs\n"
      "cite (live logs, archive segments, snapshots), keeps those another subject's run still\n"
      "cites, and refuses (ContentCopiesRemainError, nothing changed) when it cannot prove it\n"
      "can delete the rest. It journals its intent in the control log, shreds the subject's\n"
      "key (their logs then read as erased), and deletes the blobs (a blob put again meanwhile\n"
      "is kept and counted as retained). A crash anywhere is finished by running it again.\n"
      "Without --config it uses the content store and keys the home recorded; a --config\n"
      "wiring another content store is refused before the shred. A run of the subject still\n"
      "going records nothing more; running the erasure again deletes what it wrote.\n"
      "A subject that is not UTF-8 (in a home from before Loom checked) is shown with each\n"
      "stray byte as \\xNN, and named exactly in the journal and --json by subjectHex.");
  return [&session, args] {
    if (!args->subjectHex.empty()) args->subject = compliance::subjectFromHex(args->subjectHex);
    if (args->subject.empty()) {
      throw InvalidArgumentError(
          "loom erase needs the SUBJECT to erase (or --subject-hex HEX for one that is not "
          "UTF-8)");
    }
    std::string shown = compliance::shownSubject(args->subject);
    app::App& app = complianceApp(session, args->config);
    HomeLock lock(app::storageLocation(app.config()), "erase");
    if (auto why = wrongStore(app)) {
      throw compliance::ContentCopiesRemainError(args->subject, *why, -1);
    }
    app::SharingHomes sharing(
        app, "erase of subject '" + shown + "' refused, nothing was shredded or deleted");
    sweep::Archive archive = app.readableArchive();
    compliance::EraseCoordinatorOptions options = app::eraseOptions(app, archive);
    options.alsoCitedBy = sharing.pins();
    options.beforeDestroying = [&lock] { lock.check(); };
    auto result = compliance::eraseSubject(options, args->subject);
    session.out() << (args->json ? json::toText(compliance::toJson(result)) + "\n"
                                 : compliance::describe(result));
    return kExitOk;
  };
}

Action setupExport(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string subject;
    std::string output;
    std::string config;
  };
  auto args = std::make_shared<Args>();
  command.add_option("SUBJECT", args->subject, "The data subject to export")->required();
  command
      .add_option("-o,--output", args->output,
                  "The file to write, whole or not at all: a failed write leaves it as it was "
                  "(default: stdout)")
      ->type_name("FILE");
  addConfigOption(command, args->config);
  command.footer(
      "GDPR Art. 15/20. Every execution of the subject (live and archived) with its decrypted\n"
      "events and folded state, and every blob its runs offloaded (claimChecked: value,\n"
      "bytesBase64 or missing), as one JSON document (docs/spec/export.md).");
  return [&session, args] {
    app::App& app = complianceApp(session, args->config);
    if (auto why = wrongStore(app)) {
      throw FailedPreconditionError("export of subject '" + args->subject + "' refused: " + *why);
    }
    sweep::Archive archive = app.readableArchive();
    json::object exported =
        compliance::exportSubject(app::exportOptions(app, archive), args->subject);
    if (exported.at("executions").as_array().empty() &&
        exported.at("claimChecked").as_array().empty()) {
      // Art. 15 allows "nothing held", but a misspelt subject must not read as that answer.
      std::cerr << "loom export: warning: no live or archived run and no blob names subject '"
                << args->subject
                << "' (an erased subject's runs are still listed): check its spelling against "
                   "`loom ls`\n";
    }
    std::string text = json::toText(exported) + "\n";
    if (args->output.empty()) {
      session.out() << text;
      return kExitOk;
    }
    // Whole or not at all: a full disk leaves no truncated export behind. Subject data: 0600.
    posix::replaceFileDurably(args->output, text);
    session.out() << "exported subject " << args->subject << " to " << args->output << "\n";
    return kExitOk;
  };
}

Action setupKeys(CLI::App& command, HomeSession& session) {
  auto action = std::make_shared<std::string>();
  command.add_option("ACTION", *action, "new-master")
      ->required()
      ->check(CLI::IsMember({"new-master"}));
  command.footer(
      "`loom keys new-master` prints a fresh random master key (64 hex digits). Keep it out of\n"
      "the Loom home: put it in a file or an environment variable and name that in\n"
      "[security.keys] (file = ... or env = \"LOOM_MASTER_KEY\"). Losing it loses every sealed\n"
      "log; a wrong one stops boot.");
  return [&session, action] {
    session.out() << compliance::newMasterKeyHex() << "\n";
    return kExitOk;
  };
}

}  // namespace loom::cli
