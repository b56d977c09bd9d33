// The fixture of the PostgreSQL stores' own tests (postgres_event_store_test.cc,
// postgres_lease_race_test.cc): skipped without a server, each test in a schema of its own on
// the test cluster.
#pragma once

#include <gtest/gtest.h>

#include "event_store_conformance.h"
#include "loom/postgres/postgres_event_store.h"
#include "support/postgres_server.h"

namespace loom::kernel::conformance {

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { LOOM_SKIP_WITHOUT_POSTGRES(); }
  postgres::PostgresOptions options() const {
    return {loom::testing::testPostgresUrl(), loom::testing::testSchemaFor(dir_.path())};
  }
  TempDir dir_;
};

}  // namespace loom::kernel::conformance
