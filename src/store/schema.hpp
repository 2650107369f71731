// The run database's schema and its migrations (internal to store/).
#pragma once

#include "store/sqlite.hpp"
#include "util/error.hpp"

namespace ptxbench::store::detail {

// Brings the database to `target` schema version, one migration per transaction; refuses a
// database written by a newer build. Also refreshes the enum_value mirror of enums.hpp.
util::Status migrate(Connection& db, int target);

// The version recorded in the database, 0 for a fresh file.
util::Expected<int> schema_version(Connection& db);

} // namespace ptxbench::store::detail
