// `loom db migrate`: creates or upgrades Loom's tables in a PostgreSQL schema
// (docs/spec/postgresql.md), so the stores on that server can open it. The url comes from
// --url or LOOM_DATABASE_URL; its password is never printed.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>

#include "command.h"
#include "loom/kernel/version.h"
#include "loom/postgres/postgres_event_store.h"
#include "postgres/pg_connection.h"

namespace loom::cli {

Action setupDb(CLI::App& command, Session& session) {
  struct Args {
    std::string action;
    std::string url;
    std::string schema = "loom";
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  command.add_option("ACTION", args->action, "migrate")
      ->required()
      ->check(CLI::IsMember({"migrate"}));
  command
      .add_option("--url", args->url,
                  "The PostgreSQL server: a libpq URL or connection string "
                  "(default: LOOM_DATABASE_URL)")
      ->type_name("URL");
  CLI::Option* schemaOption =
      command
          .add_option("--schema", args->schema,
                      "The PostgreSQL schema that holds Loom's tables (default: "
                      "LOOM_DATABASE_SCHEMA, else loom)")
          ->type_name("NAME");
  command.add_flag("--json", args->json,
                   "Print one JSON object {\"url\", \"schema\", \"schemaVersion\", "
                   "\"eventSchema\"} (the url with its password as ***)");
  command.footer(
      "`loom db migrate` creates Loom's tables in the schema (creating the schema too), or\n"
      "upgrades older ones, under an advisory lock so workers starting at once migrate once.\n"
      "It never downgrades: a schema of a newer Loom is refused. Run it before the first worker\n"
      "and after every upgrade of Loom; stores refuse a schema they do not know.");
  return [&session, args, schemaOption] {
    std::string url = args->url.empty() ? session.options().databaseUrl : args->url;
    if (schemaOption->count() == 0 && !session.options().databaseSchema.empty()) {
      args->schema = session.options().databaseSchema;
    }
    if (url.empty()) {
      throw UsageError(
          "`loom db migrate` needs the server: pass --url postgresql://... or set "
          "LOOM_DATABASE_URL");
    }
    postgres::migrate({url, args->schema});
    std::string shown = postgres::redactUrl(url);
    if (args->json) {
      session.out() << json::toText(
                           json::object{{"url", shown},
                                        {"schema", args->schema},
                                        {"schemaVersion", postgres::kPostgresSchemaVersion},
                                        {"eventSchema", EVENT_SCHEMA}})
                    << "\n";
    } else {
      session.out() << "migrated schema '" << args->schema << "' at " << shown << " to version "
                    << postgres::kPostgresSchemaVersion << " (EVENT_SCHEMA " << EVENT_SCHEMA
                    << ")\n";
    }
    return kExitOk;
  };
}

}  // namespace loom::cli
