#include "store/stored_version.hpp"

#include "store/run_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"

namespace ptxbench::store {

util::Expected<int> stored_schema_version(const std::filesystem::path& run_dir) {
  const auto path = run_dir / RunStore::kDatabaseName;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return util::make_error(util::ErrorKind::not_found, run_dir.string() + ": no run database (" +
                                                            std::string(RunStore::kDatabaseName) +
                                                            ")");
  PTXBENCH_TRY_ASSIGN(auto db, detail::Connection::open(path));
  return detail::schema_version(db);
}

} // namespace ptxbench::store
