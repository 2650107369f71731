// The schema version a run database was written with, read without migrating it: for readers
// that must not change a run they only read (the adaptation collectors), where
// RunStore::open would migrate an older database in place.
#pragma once

#include "util/error.hpp"

#include <filesystem>

namespace ptxbench::store {

// The version recorded in `run_dir`/run.sqlite; not_found when the folder holds no run.
util::Expected<int> stored_schema_version(const std::filesystem::path& run_dir);

} // namespace ptxbench::store
