#include "suite/suite.hpp"

#include "suite/layouts.hpp"
#include "suite/metrics.hpp"
#include "trace/trace_set.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/core.h>
#include <numeric>
#include <optional>
#include <tuple>
#include <variant>

namespace ptxbench::suite {
namespace {

util::Error invalid(std::string message) {
  return util::make_error(util::ErrorKind::invalid_input, std::move(message));
}

const OpKindInfo* classify(const trace::Definition& definition) {
  for (const OpKindInfo& row : kOpKinds)
    if (definition.op_type == row.op_type && definition.name.starts_with(row.name_prefix))
      return &row;
  return nullptr;
}

std::string suite_tag(const trace::Definition& definition) {
  constexpr std::string_view kPrefix = "suite:";
  for (const std::string& tag : definition.tags)
    if (tag.starts_with(kPrefix))
      return tag.substr(kPrefix.size());
  return "custom";
}

util::Expected<ResolvedTensor> resolve(const trace::TensorSpec& spec, const Problem& problem) {
  ResolvedTensor tensor{spec.name, spec.dtype, spec.is_scalar(), {}};
  if (tensor.scalar)
    return tensor;
  for (const std::string& axis_name : *spec.shape) {
    const trace::Axis* axis = problem.definition.find_axis(axis_name);
    const auto value = axis != nullptr && axis->kind == trace::Axis::Kind::constant
                           ? std::optional<std::int64_t>(axis->value)
                           : problem.workload.axis_value(axis_name);
    if (!value)
      return invalid(fmt::format("{}: axis {} of {} has no value in workload {}", problem.name(),
                                 axis_name, spec.name, problem.workload.uuid));
    tensor.dims.push_back(*value);
  }
  return tensor;
}

util::Status resolve_all(const std::vector<trace::TensorSpec>& specs, Problem& problem,
                         std::vector<ResolvedTensor>& into) {
  for (const trace::TensorSpec& spec : specs) {
    PTXBENCH_TRY_ASSIGN(auto tensor, resolve(spec, problem));
    into.push_back(std::move(tensor));
  }
  return util::Ok{};
}

util::Expected<Problem> make_problem(const trace::TraceSet& set, const trace::Definition& def) {
  const std::string file = set.definition_path(def).string();
  const OpKindInfo* kind = classify(def);
  if (kind == nullptr)
    return invalid(fmt::format("{}: op_type {} with name {} is no known problem kind", file,
                               def.op_type, def.name));
  const auto workloads = set.workloads_for(def.name);
  if (workloads.empty())
    return invalid(fmt::format("{}: no workload for {} in {}", file, def.name,
                               set.workload_path(def).string()));
  Problem problem{def,
                  workloads.front()->workload,
                  kind->kind,
                  def.name.find("_causal") != std::string::npos ? Mask::causal : Mask::none,
                  suite_tag(def),
                  std::string(kind->baseline),
                  {},
                  {},
                  {},
                  0,
                  0};
  for (const trace::Axis& axis : def.axes)
    if (axis.kind == trace::Axis::Kind::variable)
      problem.var_axes.emplace_back(axis.name, problem.workload.axis_value(axis.name).value_or(0));
  PTXBENCH_TRY(resolve_all(def.inputs, problem, problem.inputs));
  PTXBENCH_TRY(resolve_all(def.outputs, problem, problem.outputs));
  PTXBENCH_TRY(compute_metrics(problem, set.root()));
  return problem;
}

util::Expected<trace::TraceSet> load_valid_set(const std::filesystem::path& root) {
  PTXBENCH_TRY_ASSIGN(auto set, trace::TraceSet::load(root));
  const std::vector<util::Error> problems = set.validate();
  if (problems.empty())
    return set;
  std::string message = problems.front().message;
  for (std::size_t i = 1; i < problems.size(); ++i)
    message += "\n" + problems[i].message;
  return util::make_error(problems.front().kind, message);
}

int suite_rank(const Problem& problem) {
  return problem.suite == "primary" ? 0 : problem.suite == "generalization" ? 1 : 2;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

bool has_blob_inputs(const trace::Workload& workload) {
  return std::any_of(workload.inputs.begin(), workload.inputs.end(), [](const auto& input) {
    return std::holds_alternative<trace::SafetensorsInput>(input.second);
  });
}

} // namespace

util::Expected<Suite> Suite::load(const std::filesystem::path& root) {
  PTXBENCH_TRY_ASSIGN(auto set, load_valid_set(root));
  Suite suite;
  suite.m_root = root;
  for (const trace::Definition& definition : set.definitions()) {
    PTXBENCH_TRY_ASSIGN(auto problem, make_problem(set, definition));
    suite.m_problems.push_back(std::move(problem));
  }
  std::sort(suite.m_problems.begin(), suite.m_problems.end(),
            [](const Problem& a, const Problem& b) {
              return std::tuple(suite_rank(a), a.kind, a.name()) <
                     std::tuple(suite_rank(b), b.kind, b.name());
            });
  return suite;
}

std::filesystem::path Suite::default_root() {
  return util::data_root() / "problems";
}

util::Expected<Suite> Suite::load_default() {
  return load(default_root());
}

util::Expected<const Problem*> Suite::find(std::string_view name) const {
  std::vector<std::string> names;
  for (const Problem& problem : m_problems) {
    if (problem.name() == name)
      return &problem;
    names.push_back(problem.name());
  }
  std::string message = fmt::format("unknown problem '{}'", name);
  if (const std::string closest = closest_name(name, names); !closest.empty())
    message += fmt::format("; did you mean '{}'?", closest);
  return util::make_error(util::ErrorKind::not_found, message);
}

std::string closest_name(std::string_view name, const std::vector<std::string>& names) {
  // A typo is a few edits; a name that shares nothing gets no suggestion ("nosuch" is not
  // "mha_bwd_d64"). A prefix of a known name counts as close whatever its length. Case does
  // not count: GEMM_N7168_K5120 is gemm_n7168_k5120 typed by another hand.
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  const auto lower = [](std::string_view text) {
    std::string out(text);
    for (char& c : out)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string typed = lower(name);
  std::string best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : names) {
    const std::string known = lower(candidate);
    const std::size_t distance = edit_distance(typed, known);
    const bool prefix = typed.size() >= 3 && std::string_view(known).starts_with(typed);
    if (distance > limit && !prefix)
      continue;
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

util::Expected<std::vector<std::filesystem::path>>
regenerate_blobs(const std::filesystem::path& root) {
  PTXBENCH_TRY_ASSIGN(auto set, trace::TraceSet::load(root));
  std::vector<std::filesystem::path> written;
  for (const trace::Trace& line : set.workloads()) {
    const trace::Definition* definition = set.find_definition(line.definition);
    if (definition == nullptr || !has_blob_inputs(line.workload))
      continue;
    PTXBENCH_TRY_ASSIGN(auto files, build_blob_files(*definition, line.workload));
    for (const BlobFile& file : files) {
      const auto relative = file.relative_path.lexically_normal();
      PTXBENCH_TRY(util::write_file_atomic(root / relative, file.bytes));
      written.push_back(relative);
    }
  }
  return written;
}

} // namespace ptxbench::suite
