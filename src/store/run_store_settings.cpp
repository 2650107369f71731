// The model settings a run was asked with: one row per recorded state of a model's settings.
#include "store/run_store.hpp"
#include "store/sqlite.hpp"

namespace ptxbench::store {
namespace {

constexpr std::string_view kSettingsColumns =
    "SELECT id, model, settings_json, reason, recorded_at FROM model_settings ";

util::Expected<std::optional<ModelSettingsRecord>> read_one(detail::Statement& stmt) {
  PTXBENCH_TRY_ASSIGN(auto row, stmt.step());
  std::optional<ModelSettingsRecord> record;
  if (row)
    record =
        ModelSettingsRecord{stmt.int64(0), stmt.text(1), stmt.text(2), stmt.text(3), stmt.text(4)};
  stmt.reset();
  return record;
}

} // namespace

util::Status RunStore::record_model_settings(std::string_view model, std::string_view settings_json,
                                             std::string_view reason) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  auto& insert = m_db->prepared("INSERT INTO model_settings(model, settings_json, reason, "
                                "recorded_at) VALUES (?1, ?2, ?3, ?4)");
  PTXBENCH_TRY(insert.bind(1, model).bind(2, settings_json).bind(3, reason).bind(4, now()).run());
  return transaction->commit();
}

util::Expected<std::optional<ModelSettingsRecord>>
RunStore::model_settings(std::string_view model) {
  std::lock_guard lock(m_mutex);
  auto& stmt =
      m_db->prepared(std::string(kSettingsColumns) + "WHERE model = ?1 ORDER BY id DESC LIMIT 1");
  stmt.bind(1, model);
  return read_one(stmt);
}

util::Expected<std::optional<ModelSettingsRecord>> RunStore::model_settings_by_id(std::int64_t id) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(std::string(kSettingsColumns) + "WHERE id = ?1");
  stmt.bind(1, id);
  return read_one(stmt);
}

} // namespace ptxbench::store
