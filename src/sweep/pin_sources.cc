#include "sweep/pin_sources.h"

#include "sweep/content_walker.h"

namespace loom::sweep {

PinSource archivePins(const Archive& archive) {
  return PinSource{"archive", [&archive](const AddressVisitor& visit) {
                     archive.forEachEvent([&](const std::string& id, const kernel::Event& e) {
                       kernel::requireUnsealed(id, e);  // sealed cites nothing we could see
                       visitCitedAddresses(e, visit);
                     });
                   }};
}

PinSource snapshotPins(const kernel::SnapshotStore& snapshots) {
  return PinSource{"snapshot", [&snapshots](const AddressVisitor& visit) {
                     snapshots.forEach([&](const kernel::Snapshot& s) {
                       if (const auto* o = s.state.if_object(); o && kernel::isSealed(*o)) {
                         kernel::requireUnsealed(s.executionId, kernel::Event{s.seq, {}, 0, *o});
                       }
                       visitCitedAddresses(s.state, visit);
                     });
                   }};
}

}  // namespace loom::sweep
