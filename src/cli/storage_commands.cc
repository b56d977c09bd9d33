// `loom sweep` and `loom retention run`: reclaiming content-store blobs nothing needs, and
// discarding (after archiving) the logs of old ended executions.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "app/home_record.h"
#include "app/maintenance.h"
#include "app/store_record.h"
#include "command.h"
#include "home_lock.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/retention.h"
#include "loom/sweep/sweep.h"

namespace loom::cli {
namespace {

constexpr int64_t kDay = 24LL * 3600 * 1000;

void addConfigOption(CLI::App& command, std::string& file) {
  command
      .add_option("--config", file,
                  "A loom.toml (or agent app) whose storage options to use (content store "
                  "kind and path, retention); its storage.home applies unless --home is given")
      ->type_name("FILE");
}

// A one-line progress bar on a terminal (stderr), nothing otherwise: stderr redirected to a
// file or a pipe gets no carriage return and no padding, only the results and warnings.
bool progressShown() { return isatty(STDERR_FILENO) != 0; }
std::function<void(const sweep::SweepProgress&)> progressBar() {
  if (!progressShown()) return {};
  return [](const sweep::SweepProgress& p) {
    std::cerr << "\rsweep: " << p.phase << ": " << p.executionsScanned << " executions, "
              << p.blobsSeen << " blobs   " << std::flush;
  };
}

}  // namespace

Action setupSweep(CLI::App& command, HomeSession& session) {
  struct Args {
    bool dryRun = false;
    bool json = false;
    int64_t ttlDays = 7;
    int64_t graceHours = 1;
    std::string config;
  };
  auto args = std::make_shared<Args>();
  command.add_flag("--dry-run", args->dryRun, "Report what would be deleted; delete nothing");
  command.add_flag("--json", args->json, "Print the report as one JSON object");
  command
      .add_option("--ttl-days", args->ttlDays,
                  "Telemetry blobs (envelopes without retain) survive this long after the "
                  "run citing them ended (default 7; 0 to 36500)")
      ->check(CLI::Range(int64_t{0}, int64_t{36'500}));
  command
      .add_option("--grace-hours", args->graceHours,
                  "A blob nothing cites survives this long after its last put (default 1; 0 to "
                  "876000)")
      ->check(CLI::Range(int64_t{0}, int64_t{876'000}));
  addConfigOption(command, args->config);
  command.footer(
      "Scans the live logs, archive segments and snapshots of the home and deletes the blobs\n"
      "of its content store that nothing needs. Kept: a claim-check envelope with retain: true\n"
      "(execution.claimCheck) while any history cites it, however old; everything an archive\n"
      "segment or a snapshot cites; telemetry while its run is running and for --ttl-days after\n"
      "it ended; an uncited blob for --grace-hours, and whatever the grace, every uncited\n"
      "blob touched since the oldest last event of a run that has not ended. Every delete is\n"
      "conditional: a blob put again during the sweep is spared.\n"
      "Without --config it uses the content store and keys the home recorded. It refuses,\n"
      "deleting nothing (exit 1), when it cannot read a log, archived event or snapshot\n"
      "(sealed without the master key, corrupt, unknown type; it names each execution), or\n"
      "when the wired content store is not the one the home's runs offloaded to.");
  return [&session, args] {
    if (!args->config.empty()) session.loadConfig(args->config);
    session.setKeysOptional();  // without keys, the sweep names the sealed runs it cannot read
    app::App& app = session.app(false);
    HomeLock lock(app::storageLocation(app.config()), "sweep");
    if (auto why = app::contentStoreMismatch(app.config(), *app.contentStore())) {
      throw FailedPreconditionError("sweep refused, nothing was deleted: " + *why);
    }
    app::SharingHomes sharing(app, "sweep refused, nothing was deleted");
    sweep::Archive archive = app.readableArchive();
    sweep::SweepOptions options;
    options.ttlMillis = args->ttlDays * kDay;
    options.graceMillis = args->graceHours * 3600 * 1000;
    options.dryRun = args->dryRun;
    // The sweep proves it still holds its lock before every 64 deletes, and at most once a
    // second while it reads.
    std::function<void(const sweep::SweepProgress&)> bar;
    if (!args->json) bar = progressBar();
    auto lastCheck = std::chrono::steady_clock::now();
    options.onProgress = [&lock, bar, lastCheck](const sweep::SweepProgress& p) mutable {
      // Before every 64 deletes, and at most once a second while it reads.
      if (p.phase == "delete" ||
          std::chrono::steady_clock::now() - lastCheck >= std::chrono::seconds(1)) {
        lock.check();
        lastCheck = std::chrono::steady_clock::now();
      }
      if (bar) bar(p);
    };
    sweep::SweepSources sources = app::sweepSources(app, archive);
    for (sweep::PinSource& pins : sharing.pins()) sources.pins.push_back(std::move(pins));
    sweep::SweepReport report;
    try {
      report = sweep::sweepUnpinnedContent(*app.contentStore(), sources, options);
    } catch (const sweep::SweepRefusedError& e) {
      if (!session.keysUnavailable()) throw;
      throw FailedPreconditionError(std::string(e.what()) +
                                    "; this home's keys: " + *session.keysUnavailable());
    }
    lock.check();  // the report is the sweep's alone
    if (!args->json && progressShown()) std::cerr << "\r" << std::string(60, ' ') << "\r";
    session.out() << (args->json ? json::toText(sweep::toJson(report)) + "\n"
                                 : sweep::describe(report));
    return kExitOk;
  };
}

namespace {

// `loom retention supersede SEGMENT`: under the maintenance lock, like a retention run.
template <typename Args>
int supersede(HomeSession& session, const Args& args) {
  if (args.segment.empty()) {
    throw InvalidArgumentError(
        "retention supersede needs the SEGMENT to retire: its file name, as `loom retention "
        "run --dry-run` names it");
  }
  session.setKeysOptional();  // it compares the logs as stored: sealed ones need no key
  app::App& app = session.app(false);
  HomeLock lock(app::storageLocation(app.config()), "retention supersede");
  sweep::SupersedeOptions options;
  options.dryRun = args.dryRun;
  options.beforeJournaling = [&lock] { lock.check(); };
  sweep::SupersedeReport report = app.supersedeSegment(args.segment, options);
  session.out() << (args.json ? json::toText(sweep::toJson(report)) + "\n"
                              : sweep::describe(report));
  return kExitOk;
}

}  // namespace

Action setupRetention(CLI::App& command, HomeSession& session) {
  struct Args {
    std::string action;
    std::string segment;
    bool dryRun = false;
    bool json = false;
    std::string config;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ACTION", args->action, "run, or supersede SEGMENT")
      ->required()
      ->check(CLI::IsMember({"run", "supersede"}));
  command.add_option("SEGMENT", args->segment,
                     "supersede: the damaged segment's file name, as `run` names it");
  command.add_flag("--dry-run", args->dryRun, "Report what would be done; change nothing");
  command.add_flag("--json", args->json, "Print the report as one JSON object");
  addConfigOption(command, args->config);
  command.footer(
      "Applies storage.retention { afterDays, archive } of the --config file: ended executions\n"
      "older than afterDays are written into a read-only, compressed archive segment in\n"
      "<home>/archive (with storage.url: in the server's archive tables, which every machine\n"
      "reads) unless archive = false, and only then removed from the live log. Archived\n"
      "executions stay readable (`loom log`) and keep pinning their blobs for `loom sweep`.\n"
      "A crash in the middle loses nothing: run it again. An earlier segment that does not read\n"
      "back whole is kept as it is (it may hold the only copies of runs removed before) and the\n"
      "selected logs it held are archived anew; the run then exits 1 naming it, since the sweep,\n"
      "erasure and export refuse it: restore it from a backup, or supersede it.\n"
      "`supersede SEGMENT` retires a damaged segment once every run it lists is whole\n"
      "elsewhere (a newer segment or its live log: same version, every event read back, the\n"
      "same events where its own block still reads). It journals the mark; from then on the\n"
      "sweep, erasure, export and `loom log` leave the segment out, and its file may be moved\n"
      "away. It refuses, changing nothing (exit 1), while a run's only copy is in the segment.");
  return [&session, args] {
    if (!args->config.empty()) session.loadConfig(args->config);
    if (args->action == "supersede") return supersede(session, *args);
    if (!args->segment.empty()) {
      throw InvalidArgumentError(
          "retention run takes no SEGMENT; did you mean `loom retention "
          "supersede " +
          args->segment + "`?");
    }
    app::App& app = session.app(false);
    HomeLock lock(app::storageLocation(app.config()), "retention run");
    app::requireStoreOwnedOrShared(app.config(),
                                   "retention run refused, nothing was archived or removed");
    const auto& retention = app.config().storage.retention;
    if (!retention) {
      throw FailedPreconditionError(
          "no storage.retention is configured: add [storage.retention] afterDays = N to a "
          "loom.toml and pass it with --config");
    }
    sweep::RetentionOptions options;
    options.afterDays = retention->afterDays;
    options.archive = retention->archive;
    options.dryRun = args->dryRun;
    options.beforeRemoving = [&lock] { lock.check(); };
    auto report = app.runRetention(options);
    session.out() << (args->json ? json::toText(sweep::toJson(report)) + "\n"
                                 : sweep::describe(report));
    if (report.damagedSegments.empty()) return kExitOk;
    // Done, but the sweep, erasure and export now refuse the damaged segments: say so by the
    // exit status too, for a cron job or a script.
    std::cerr << "loom retention run: " << (args->dryRun ? "dry run: " : "finished, but ")
              << report.damagedSegments.size() << " archive segment(s) did not read back whole ("
              << *report.damagedSegments.begin()
              << (report.damagedSegments.size() > 1 ? ", ..." : "")
              << "); the sweep, erasure and export refuse them: restore them from a backup, "
                 "or retire each with `loom retention supersede SEGMENT` once a later run "
                 "archived its runs anew (docs/spec/archive-segment.md)\n";
    return kExitFailure;
  };
}

}  // namespace loom::cli
