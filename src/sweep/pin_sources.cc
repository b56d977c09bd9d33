#include "loom/sweep/pin_sources.h"

#include "loom/sweep/content_walker.h"

namespace loom::sweep {

PinSource archivePins(const Archive& archive) {
  return PinSource{"archive", [&archive](const AddressVisitor& visit) {
                     archive.forEachEvent([&](const std::string&, const kernel::Event& e) {
                       visitCitedAddresses(e, visit);
                     });
                   }};
}

PinSource snapshotPins(const kernel::SnapshotStore& snapshots) {
  return PinSource{"snapshot", [&snapshots](const AddressVisitor& visit) {
                     snapshots.forEach([&](const kernel::Snapshot& s) {
                       visitCitedAddresses(s.state, visit);
                     });
                   }};
}

}  // namespace loom::sweep
