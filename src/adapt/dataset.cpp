#include "adapt/dataset.hpp"

#include "util/fs.hpp"
#include "util/hash.hpp"

#include <limits>

namespace ptxbench::adapt {

std::string_view to_string(DatasetKind kind) {
  return kind == DatasetKind::fixit ? "fixit" : "kernelgen";
}

std::filesystem::path stage_dir(const std::filesystem::path& dir, DatasetKind kind,
                                std::string_view stage) {
  return dir / std::string(to_string(kind)) / std::string(stage);
}

util::Status write_if_changed(const std::filesystem::path& path, std::string_view content) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    auto existing = util::read_file(path);
    if (existing && *existing == content)
      return util::Ok{};
  }
  return util::write_file_atomic(path, content);
}

util::Expected<std::string> file_sha256(const std::filesystem::path& path) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  return util::sha256_hex(text);
}

std::string manifest_text(const Json& manifest) {
  return manifest.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Json composition_json(const Composition& counts) {
  Json rows = Json::array();
  for (const auto& [key, count] : counts)
    rows.push_back(Json{{"problem", std::get<0>(key)},
                        {"category", std::get<1>(key)},
                        {"turn", std::get<2>(key)},
                        {"count", count}});
  return rows;
}

Json composition_json(const Composition& pre, const Composition& post) {
  Composition keys = pre;
  for (const auto& [key, count] : post)
    keys.try_emplace(key, 0);
  Json rows = Json::array();
  for (const auto& [key, unused] : keys) {
    auto in_post = post.find(key);
    rows.push_back(Json{{"problem", std::get<0>(key)},
                        {"category", std::get<1>(key)},
                        {"turn", std::get<2>(key)},
                        {"pre", pre.contains(key) ? pre.at(key) : 0},
                        {"post", in_post == post.end() ? 0 : in_post->second}});
  }
  return rows;
}

Composition read_composition(util::JsonReader& in, const Json& rows, const std::string& path) {
  Composition counts;
  if (!in.expect_array(rows, path))
    return counts;
  for (std::size_t i = 0; i < rows.size() && in.ok(); ++i) {
    const Json& row = rows[i];
    const std::string at = util::index_path(path, i);
    if (!in.expect_object(row, at))
      break;
    std::string problem = in.string(row, at, "problem", util::Emptiness::allowed);
    std::string category = in.string(row, at, "category", util::Emptiness::allowed);
    const std::int64_t turn = in.integer(row, at, "turn");
    const std::int64_t count = in.integer(
        row, at, "count", util::IntegerRange{0, std::numeric_limits<std::int64_t>::max()});
    if (in.ok())
      counts[{std::move(problem), std::move(category), turn}] += count;
  }
  return counts;
}

util::Expected<Composition> composition_from_json(const Json& rows) {
  util::JsonReader in("");
  Composition counts = read_composition(in, rows, "$");
  return in.finish(std::move(counts));
}

CompositionKey composition_key(const FailureRecord& record) {
  return {record.trajectory_key.problem, record.category, record.turn};
}

} // namespace ptxbench::adapt
