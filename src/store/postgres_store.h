// The PostgreSQL back end: any number of tensorfleet servers may share one database.
//
// Connections come from a fixed-size pool that reconnects by itself when PostgreSQL restarts;
// receiving claims messages with SELECT ... FOR UPDATE SKIP LOCKED, so concurrent receivers (on
// any server) never get the same message; every change that may make messages visible is announced
// with NOTIFY, so the queue listener hears about other servers' changes too. Schema changes are
// versioned migrations, applied at open under an advisory lock.
//
// Errors follow store.h: kUnavailable when the database cannot be reached or is restarting (retry
// the call; a write that failed at commit this way may or may not have been made), kAborted when
// a transaction still lost a conflict after a few retries, kInternal for the unexpected.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace tf::store {

// Connects to the database named by `conninfo` (postgresql://user@host:port/dbname, postgres://,
// or "host=... dbname=..." keywords) and applies pending migrations. kUnavailable if the server
// cannot be reached; kFailedPrecondition if its schema is newer than this build knows.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& conninfo);

}  // namespace tf::store
