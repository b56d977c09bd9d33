// The stores erasure, export and the sweep read, as an app wired them: the one place that
// hands them over, for the `loom erase`, `loom export` and `loom sweep` commands and the
// simulator (src/sim). Sealed logs are read through the app's sealing layers, archived events
// unsealed with its keys, and the app's clock stamps what they record.
#pragma once

#include "loom/app/app.h"
#include "loom/compliance/erase.h"
#include "loom/compliance/export.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/sweep.h"

namespace loom::app {

// `app` must have keys (security.keys); `archive` is the app's (archiveStore()). Both must
// outlive the options.
compliance::EraseCoordinatorOptions eraseOptions(App& app, const sweep::Archive& archive);
compliance::ExportSubjectOptions exportOptions(App& app, const sweep::Archive& archive);
// The live logs as the app reads them (unsealed), so every cited ref is seen, plus the pins of
// the archive (unsealed with the app's keys when it has them) and of its snapshots.
sweep::SweepSources sweepSources(App& app, const sweep::Archive& archive);

// The homes other than `app`'s that use its content store, each opened to read what it cites
// (its live logs, archive and snapshots; sealed ones with the master key its home record
// names), so that the sweep and erasure of a shared store spare it. Refuses
// (FailedPreconditionError starting with `refused`) when another home uses the store and
// storage.contentStore.shared is not set (requireStoreOwnedOrShared). Must outlive its pins.
class SharingHomes {
 public:
  SharingHomes(const App& app, std::string_view refused);
  ~SharingHomes();
  SharingHomes(const SharingHomes&) = delete;
  SharingHomes& operator=(const SharingHomes&) = delete;
  // One pin source per other home, reason "sharedHome".
  std::vector<sweep::PinSource> pins() const;

 private:
  struct Home;
  std::vector<std::unique_ptr<Home>> homes_;
};

}  // namespace loom::app
