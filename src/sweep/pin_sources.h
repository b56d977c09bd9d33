// The sweep's pin sources over the stores that pin everything they cite (DESIGN §4):
// archive segments (ADR 0138) and snapshots. Each visits every content address its documents
// cite; the sweep keeps those blobs whatever their age.
#pragma once

#include "loom/kernel/snapshot_store.h"
#include "loom/sweep/archive.h"
#include "loom/sweep/sweep.h"

namespace loom::sweep {

// Both must outlive the returned source.
PinSource archivePins(const Archive& archive);
PinSource snapshotPins(const kernel::SnapshotStore& snapshots);

}  // namespace loom::sweep
