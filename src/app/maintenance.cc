#include "maintenance.h"

#include <sodium.h>

#include "compliance/sealing_event_store.h"
#include "home_record.h"
#include "loom/compliance/master_key.h"
#include "loom/sweep/retention.h"
#include "storage_location.h"
#include "store_record.h"
#include "sweep/content_walker.h"
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

struct SharingHomes::Home {
  explicit Home(const std::filesystem::path& home) : where{.home = home} {
    HomeRecord record = readHomeRecord(where);
    store = openEventStore(where);
    archive.emplace(sweep::readableArchive(openArchiveStore(where), *store));
    if (record.keysUnknownHere) throw FailedPreconditionError(*record.keysUnknownHere);
    if (record.keys) {
      auto masterKey = compliance::loadMasterKey(*record.keys);
      try {
        keys = openKeyStore(where, masterKey, compliance::masterKeyOrigin(*record.keys), nullptr);
      } catch (...) {
        sodium_memzero(masterKey.data(), masterKey.size());
        throw;
      }
      sodium_memzero(masterKey.data(), masterKey.size());
      reader = std::make_unique<compliance::SealingEventStore>(
          *store, *keys, compliance::SealingOptions{.sealSubjectless = record.crypto});
    }
    snapshots = openSnapshotStore(where);
  }
  const kernel::EventStore& logs() const { return reader ? *reader : *store; }

  StorageLocation where;
  std::optional<sweep::Archive> archive;  // once its store is open: its superseded segments
  std::unique_ptr<kernel::EventStore> store;
  std::unique_ptr<compliance::KeyStore> keys;
  std::unique_ptr<kernel::EventStore> reader;  // through the home's keys, when it has them
  std::unique_ptr<kernel::SnapshotStore> snapshots;
};

SharingHomes::SharingHomes(const App& app, std::string_view refused) {
  for (const OtherHome& other : requireStoreOwnedOrShared(app.config(), refused)) {
    try {
      homes_.push_back(std::make_unique<Home>(other.home));
      sweep::requireJournaledSegments(homes_.back()->logs(), *homes_.back()->archive);
    } catch (const Error& e) {
      throw FailedPreconditionError(
          std::string(refused) + ": the content store is shared with the home " +
          other.home.string() + ", whose citations cannot be read (" + e.what() +
          "); what it cites would be taken for unneeded. Make it readable here (its master key, "
          "its loom.db) and run again");
    }
  }
}

SharingHomes::~SharingHomes() = default;

std::vector<sweep::PinSource> SharingHomes::pins() const {
  std::vector<sweep::PinSource> pins;
  for (const auto& home : homes_) {
    const Home& h = *home;
    sweep::PinSource archived = h.keys ? compliance::sealedArchivePins(*h.archive, *h.keys)
                                       : sweep::archivePins(*h.archive);
    sweep::PinSource snapshotted = sweep::snapshotPins(*h.snapshots);
    pins.push_back({"sharedHome", [&h, archived, snapshotted](const sweep::AddressVisitor& visit) {
                      kernel::forEachExecution(h.logs(), {}, [&](const kernel::ExecutionInfo& i) {
                        h.logs().scan(i.id, 1, [&](const kernel::Event& e) {
                          kernel::requireUnsealed(i.id, e);  // a sealed event could cite anything
                          sweep::visitCitedAddresses(e, visit);
                        });
                      });
                      archived.visitAddresses(visit);
                      snapshotted.visitAddresses(visit);
                    }});
  }
  return pins;
}

}  // namespace loom::app
