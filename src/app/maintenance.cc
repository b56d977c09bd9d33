#include "maintenance.h"

#include "compliance/sealing_event_store.h"
#include "loom/sweep/retention.h"
#include "sweep/pin_sources.h"

namespace loom::app {

compliance::EraseCoordinatorOptions eraseOptions(App& app, const sweep::Archive& archive) {
  sweep::requireJournaledSegments(app.store(), archive);
  compliance::EraseCoordinatorOptions options{app.store(), *app.keys()};
  options.content = app.contentStore().get();
  options.archive = &archive;
  options.snapshots = &app.snapshots();
  options.ledger = app.blobLedger();
  options.clock = app.clock();
  return options;
}

compliance::ExportSubjectOptions exportOptions(App& app, const sweep::Archive& archive) {
  sweep::requireJournaledSegments(app.store(), archive);
  compliance::ExportSubjectOptions options{app.store()};
  options.content = app.contentStore().get();
  options.archive = &archive;
  options.snapshots = &app.snapshots();
  options.keys = app.keys();
  options.ledger = app.blobLedger();
  options.clock = app.clock();
  return options;
}

sweep::SweepSources sweepSources(App& app, const sweep::Archive& archive) {
  sweep::requireJournaledSegments(app.store(), archive);
  return sweep::SweepSources{&app.store(),
                             {app.keys() ? compliance::sealedArchivePins(archive, *app.keys())
                                         : sweep::archivePins(archive),
                              sweep::snapshotPins(app.snapshots())}};
}

}  // namespace loom::app
