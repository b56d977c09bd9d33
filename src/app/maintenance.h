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

}  // namespace loom::app
