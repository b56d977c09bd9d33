// The PostgreSQL control log's typed reads (beside the conformance suite every store runs):
// through the index control_by_type, and refusing a row indexed under no known type.
#include <gmock/gmock.h>

#include "loom/kernel/event_store.h"
#include "loom/util/error.h"
#include "postgres/pg_connection.h"
#include "postgres/pg_schema.h"
#include "postgres_store_test_support.h"

namespace loom::kernel::conformance {
namespace {

using ::testing::HasSubstr;

class PostgresControlLogTest : public PostgresStoreTest {
 protected:
  // A connection of the test's own, in the store's schema, for what Loom would never do.
  postgres::Connection admin() const {
    return postgres::Connection(options().url, options().schema);
  }
};

// A typed read of the control log goes through the index control_by_type (the type as the
// envelope spells it), so a listing costs the rows it returns; a row that does not read is
// still refused by every typed read.
TEST_F(PostgresControlLogTest, ATypedReadUsesTheIndexAndRefusesACorruptRow) {
  postgres::migrate(options());
  postgres::PostgresEventStore store(options());
  for (const char* type : {"BLOB_READ", "SUBJECT_SHREDDED", "BLOB_READ", "RETENTION_RUN"}) {
    kernel::appendControlAtEnd(store, kernel::ControlEvent{0, type, 1, json::object{{"x", 1}}});
  }
  auto shredded = store.readControlOfTypes({"SUBJECT_SHREDDED", "RETENTION_RUN"});
  ASSERT_EQ(shredded.size(), 2u);
  EXPECT_EQ(shredded[0].seq, 2);
  EXPECT_EQ(shredded[1].type, "RETENTION_RUN");
  EXPECT_EQ(store.readControlOfTypes({"BLOB_READ"}, 2).size(), 1u);

  auto conn = admin();
  conn.run("SET enable_seqscan = off", "test");  // a table this small would be scanned anyway
  postgres::Result plan =
      conn.execDynamic("EXPLAIN SELECT seq FROM control WHERE " LOOM_PG_CONTROL_TYPE
                       " = 'RETENTION_RUN' AND seq >= 1",
                       {}, "test");
  std::string text;
  for (int row = 0; row < plan.rows(); ++row) text += std::string(plan.text(row, 0)) + "\n";
  EXPECT_THAT(text, HasSubstr("control_by_type"));

  // A type a flipped byte changed (the row's checksum no longer matches): a typed read of any
  // type refuses it, as a read of the whole log does.
  conn.run(
      "UPDATE control SET body = convert_to(replace(convert_from(body, 'UTF8'), "
      "'RETENTION_RUN', 'RETENTION_RUP'), 'UTF8') WHERE seq = 4",
      "test");
  EXPECT_THROW(store.readControlOfTypes({"SUBJECT_SHREDDED"}), CorruptEventError);
  conn.run(
      "UPDATE control SET body = convert_to(replace(convert_from(body, 'UTF8'), "
      "'RETENTION_RUP', 'RETENTION_RUN'), 'UTF8') WHERE seq = 4",
      "test");
  EXPECT_EQ(store.readControlOfTypes({"SUBJECT_SHREDDED"}).size(), 1u);
  conn.run("UPDATE control SET body = convert_to('not json', 'UTF8') WHERE seq = 3", "test");
  try {
    store.readControlOfTypes({"SUBJECT_SHREDDED"});
    FAIL() << "a typed read passed over a corrupt row";
  } catch (const CorruptEventError& e) {
    EXPECT_EQ(3, e.seq());
  }
}

}  // namespace
}  // namespace loom::kernel::conformance
