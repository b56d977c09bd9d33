// `loom doctor`: what a home's record points at (its content store, the store's own id, the
// master key's origin), and which other homes use the same store. Read-only: it opens no store
// and claims nothing, so it is safe on a copy, a restored backup or a home of another machine.
#include <CLI/CLI.hpp>
#include <cstdlib>

#include "app/home_record.h"
#include "app/store_record.h"
#include "command.h"
#include "loom/json/json.h"
#include "util/posix_file.h"

namespace loom::cli {
namespace {

struct StoreFindings {
  json::object store;
  std::vector<std::string> problems;
};

// The recorded store, its id against the home's, and the homes that share it.
StoreFindings examineStore(const app::Config& config, const app::HomeRecord& record) {
  StoreFindings f;
  const app::ContentStoreIdentity& store = *record.contentStore;
  f.store = {{"kind", store.kind}, {"path", store.path}, {"sealed", store.sealed},
             {"shared", record.contentStoreShared}};
  if (store.kind == "postgresql") return f;
  app::StoreRecord self(store);
  bool exists = posix::pathExists(store.path);
  f.store["exists"] = exists;
  if (!exists) f.problems.push_back(store.path + " does not exist: is its disk mounted?");
  try {
    if (exists) {
      auto id = self.id();
      f.store["storeId"] = id ? json::value(*id) : json::value(nullptr);
    }
    json::array others;
    for (const app::OtherHome& h : app::otherHomesOfStore(config)) {
      others.push_back(
          json::object{{"home", h.home.string()}, {"foundBy", h.foundBy}, {"gone", h.gone}});
      if (h.gone) {
        f.problems.push_back("the home " + h.home.string() + " claimed this store (" + h.foundBy +
                             "): sweep, erase and retention refuse until it claims it from "
                             "where it is now and `loom doctor --forget-home " +
                             h.home.string() + "` releases the old claim");
      } else if (!record.contentStoreShared) {
        f.problems.push_back("the home " + h.home.string() + " also uses this store (" +
                             h.foundBy +
                             "): sweep, erase and retention refuse until both declare "
                             "storage.contentStore.shared = true, or one gets its own store");
      }
    }
    f.store["otherHomes"] = std::move(others);
  } catch (const Error& e) {
    f.problems.push_back(e.what());
  }
  return f;
}

json::object keysOrigin(const compliance::KeysConfig& keys, std::vector<std::string>& problems) {
  json::object o;
  if (keys.file) {
    o["file"] = *keys.file;
    bool there = posix::pathExists(*keys.file);
    o["exists"] = there;
    if (!there) problems.push_back("the master key file " + *keys.file + " does not exist");
  }
  if (keys.env) {
    o["env"] = *keys.env;
    bool set = std::getenv(keys.env->c_str()) != nullptr;
    o["set"] = set;
    if (!set) problems.push_back("the master key's variable " + *keys.env + " is not set here");
  }
  return o;
}

std::string text(const json::object& report) {
  std::string out = "home           " + std::string(report.at("home").as_string()) + "\n";
  if (const auto* s = report.if_contains("contentStore"); s && s->is_object()) {
    const json::object& store = s->as_object();
    out += "content store  " + std::string(store.at("kind").as_string()) + " at " +
           std::string(store.at("path").as_string()) +
           (store.at("sealed").as_bool() ? " (sealed)" : "") + "\n";
    if (const auto* id = store.if_contains("storeId")) {
      out += "store id       " +
             (id->is_string() ? std::string(id->as_string()) : std::string("none yet")) + "\n";
    }
    out += std::string("shared         ") + (store.at("shared").as_bool() ? "yes" : "no") +
           " (storage.contentStore.shared)\n";
    if (const auto* others = store.if_contains("otherHomes")) {
      if (others->as_array().empty()) out += "other homes    none use this store\n";
      for (const auto& h : others->as_array()) {
        out += "other home     " + std::string(h.at("home").as_string()) + " (" +
               std::string(h.at("foundBy").as_string()) + ")\n";
      }
    }
  } else {
    out += "content store  none recorded (no run has offloaded a blob)\n";
  }
  if (const auto* k = report.if_contains("keys"); k && k->is_object()) {
    const json::object& keys = k->as_object();
    if (const auto* f = keys.if_contains("file")) out += "master key     file " + std::string(f->as_string()) + "\n";
    if (const auto* e = keys.if_contains("env")) out += "master key     environment variable " + std::string(e->as_string()) + "\n";
  }
  const auto& problems = report.at("problems").as_array();
  out += problems.empty() ? "no problem found\n" : "problems:\n";
  for (const auto& p : problems) out += "  - " + std::string(p.as_string()) + "\n";
  return out;
}

}  // namespace

// Releases the claim of `home` on the home's store, unless a home there still uses it.
int forgetHome(HomeSession& session, const app::Config& config, const app::HomeRecord& record,
               const std::filesystem::path& home) {
  if (!record.contentStore || record.contentStore->kind == "postgresql") {
    throw FailedPreconditionError(
        "--forget-home: this home records no content store on disk, so no claim to release");
  }
  if (app::sameFile(home, session.location().home)) {
    throw FailedPreconditionError("--forget-home: " + home.string() +
                                  " is this home, which uses the store; its claim stands");
  }
  for (const app::OtherHome& h : app::otherHomesOfStore(config)) {
    if (!h.gone && app::sameFile(h.home, home)) {
      throw FailedPreconditionError("--forget-home: the home " + h.home.string() +
                                    " is there and still uses this store (" + h.foundBy +
                                    "); its claim stands. Declare the store shared instead, or "
                                    "give that home its own store");
    }
  }
  // The claim as it was spelled, found however DIR is spelled now (through a link).
  app::StoreRecord self(*record.contentStore);
  std::string path = app::normalPath(home);
  for (const auto& claimed : self.claims()) {
    if (app::sameFile(claimed, home)) path = claimed.string();
  }
  if (!self.release(path)) {
    throw NotFoundError("--forget-home: " + app::describe(*record.contentStore) +
                        " holds no claim of the home " + path + " (see `loom doctor`)");
  }
  session.out() << "released the claim of the home " << path << " on "
                << app::describe(*record.contentStore) << "\n";
  return kExitOk;
}

Action setupDoctor(CLI::App& command, HomeSession& session) {
  auto json = std::make_shared<bool>(false);
  auto forget = std::make_shared<std::string>();
  command
      .add_option("--forget-home", *forget,
                  "Release the claim a home at DIR made on this home's store, once no home "
                  "remains there (moved or deleted); refused while one does")
      ->type_name("DIR");
  command.add_flag("--json", *json,
                   "Print one JSON object {\"home\", \"contentStore\": {\"kind\", \"path\", "
                   "\"sealed\", \"shared\", \"exists\", \"storeId\", \"otherHomes\"}, \"keys\", "
                   "\"problems\"}");
  command.footer(
      "Reads the home's record: the content store its runs offload to (a store inside the\n"
      "home is recorded relative to it, so a copy uses its own), the id that store holds, the\n"
      "other homes that use it (a claim in the store, or the store in that home's folder), and\n"
      "where the master key comes from. Opens no store and changes nothing. Exit 1 when it\n"
      "finds a problem (each is named), e.g. a store another home uses that is not declared\n"
      "shared, which `loom sweep`, `loom erase` and `loom retention run` refuse.");
  return [&session, json, forget] {
    session.requireDatabase();
    app::StorageLocation where = session.location();
    app::HomeRecord record = app::readHomeRecord(where);
    app::Config config;
    config.storage.home = where.home.string();
    config.storage.url = where.url;
    config.storage.schema = where.schema;
    app::applyHomeRecord(record, config);
    if (!forget->empty()) return forgetHome(session, config, record, *forget);
    json::object report{{"home", where.describe()}};
    std::vector<std::string> problems;
    if (record.contentStore) {
      StoreFindings f = examineStore(config, record);
      report["contentStore"] = std::move(f.store);
      problems = std::move(f.problems);
    }
    if (record.keys) report["keys"] = keysOrigin(*record.keys, problems);
    if (record.keysUnknownHere) problems.push_back(*record.keysUnknownHere);
    json::array list;
    for (auto& p : problems) list.emplace_back(p);
    report["problems"] = std::move(list);
    session.out() << (*json ? json::toText(json::value(report)) + "\n" : text(report));
    return problems.empty() ? kExitOk : kExitFailure;
  };
}

}  // namespace loom::cli
