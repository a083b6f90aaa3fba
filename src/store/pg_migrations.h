// The PostgreSQL schema, as numbered migrations recorded in schema_migrations.
#pragma once

#include "base/status.h"
#include "store/pg_pool.h"

namespace tf::store {

// The schema version this build writes.
int PostgresSchemaVersion();

// Applies every missing migration, each in its own transaction under a database-wide advisory
// lock, so that servers starting at the same time neither race nor apply one twice. Returns the
// resulting version. kFailedPrecondition if the database has a newer schema than this build knows.
Result<int> MigratePostgres(PgPool& pool);

}  // namespace tf::store
