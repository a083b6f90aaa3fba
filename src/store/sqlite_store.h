// The embedded back end: one SQLite file in WAL mode. Writes go through one writer thread that
// batches concurrent commits (store/sqlite_writer.h); reads use a small pool of connections.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "store/store.h"

namespace tf::store {

// Opens or creates the database at `path` and applies pending migrations.
// kUnavailable if the file cannot be opened.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);

}  // namespace tf::store
