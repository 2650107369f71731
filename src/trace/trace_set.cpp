// Loading, looking up and adding to a TraceSet. Files are found recursively and read in path
// order, like upstream's sorted rglob, so a misplaced file still loads and validate() can
// report it. Names are unique per kind across the whole set. The add_* functions write
// through to disk before changing memory, so a failed write leaves the set as it was.
#include "trace/trace_set.hpp"

#include <algorithm>

namespace ptxbench::trace {
namespace fs = std::filesystem;
namespace {

util::Error invalid(std::string message) {
  return util::make_error(util::ErrorKind::invalid_input, std::move(message));
}

util::Expected<std::vector<fs::path>> files_under(const fs::path& folder, std::string_view ext) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return files;
  for (fs::recursive_directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ext)
      files.push_back(it->path());
  if (ec)
    return util::make_error(util::ErrorKind::io, folder.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// A name used as one path component: non-empty, no separator, not "." or "..".
util::Status check_component(std::string_view what, const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos)
    return invalid(std::string(what) + " \"" + name + "\" cannot be a path component");
  return util::Ok{};
}

template <typename T> const T* find_named(const std::vector<T>& items, std::string_view name) {
  for (const T& item : items)
    if (item.name == name)
      return &item;
  return nullptr;
}

template <typename T>
util::Status check_new_name(const std::vector<T>& items, const std::vector<fs::path>& files,
                            const T& item, const fs::path& file, std::string_view kind) {
  for (std::size_t i = 0; i < items.size(); ++i)
    if (items[i].name == item.name)
      return invalid(file.string() + ": duplicate " + std::string(kind) + " name \"" + item.name +
                     "\" (also in " + files[i].string() + ")");
  return util::Ok{};
}

} // namespace

TraceSet::TraceSet(fs::path root) : m_root(std::move(root)) {}

util::Expected<TraceSet> TraceSet::load(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return util::make_error(util::ErrorKind::not_found, root.string() + ": no such directory");
  TraceSet set(root);
  PTXBENCH_TRY(set.load_definitions());
  PTXBENCH_TRY(set.load_solutions());
  PTXBENCH_TRY(set.load_jsonl("workloads", set.m_workloads, set.m_workload_files));
  PTXBENCH_TRY(set.load_jsonl("traces", set.m_traces, set.m_trace_files));
  return set;
}

util::Status TraceSet::load_definitions() {
  PTXBENCH_TRY_ASSIGN(auto files, files_under(m_root / "definitions", ".json"));
  for (const fs::path& file : files) {
    PTXBENCH_TRY_ASSIGN(auto def, load_definition(file));
    PTXBENCH_TRY(check_new_name(m_definitions, m_definition_files, def, file, "definition"));
    m_definitions.push_back(std::move(def));
    m_definition_files.push_back(file.lexically_relative(m_root));
  }
  return util::Ok{};
}

util::Status TraceSet::load_solutions() {
  PTXBENCH_TRY_ASSIGN(auto files, files_under(m_root / "solutions", ".json"));
  for (const fs::path& file : files) {
    PTXBENCH_TRY_ASSIGN(auto solution, load_solution(file));
    PTXBENCH_TRY(check_new_name(m_solutions, m_solution_files, solution, file, "solution"));
    m_solutions.push_back(std::move(solution));
    m_solution_files.push_back(file.lexically_relative(m_root));
  }
  return util::Ok{};
}

util::Status TraceSet::load_jsonl(std::string_view folder, std::vector<Trace>& into,
                                  std::vector<fs::path>& files) {
  PTXBENCH_TRY_ASSIGN(auto found, files_under(m_root / folder, ".jsonl"));
  bool want_workloads = folder == "workloads";
  for (const fs::path& file : found) {
    PTXBENCH_TRY_ASSIGN(auto traces, load_traces_jsonl(file));
    for (std::size_t i = 0; i < traces.size(); ++i) {
      if (traces[i].is_workload_trace() != want_workloads)
        return invalid(file.string() + ": entry " + std::to_string(i + 1) +
                       (want_workloads ? " is an evaluated trace, not a workload"
                                       : " is a workload, not an evaluated trace"));
      into.push_back(std::move(traces[i]));
      files.push_back(file.lexically_relative(m_root));
    }
  }
  return util::Ok{};
}

const Definition* TraceSet::find_definition(std::string_view name) const {
  return find_named(m_definitions, name);
}

const Solution* TraceSet::find_solution(std::string_view name) const {
  return find_named(m_solutions, name);
}

const Trace* TraceSet::find_workload(std::string_view definition, std::string_view uuid) const {
  for (const Trace& trace : m_workloads)
    if (trace.definition == definition && trace.workload.uuid == uuid)
      return &trace;
  return nullptr;
}

std::vector<const Trace*> TraceSet::workloads_for(std::string_view definition) const {
  std::vector<const Trace*> found;
  for (const Trace& trace : m_workloads)
    if (trace.definition == definition)
      found.push_back(&trace);
  return found;
}

std::vector<const Trace*> TraceSet::traces_for(std::string_view definition) const {
  std::vector<const Trace*> found;
  for (const Trace& trace : m_traces)
    if (trace.definition == definition)
      found.push_back(&trace);
  return found;
}

std::vector<const Solution*> TraceSet::solutions_for(std::string_view definition) const {
  std::vector<const Solution*> found;
  for (const Solution& solution : m_solutions)
    if (solution.definition == definition)
      found.push_back(&solution);
  return found;
}

fs::path TraceSet::resolve_blob(const SafetensorsInput& blob) const {
  fs::path path(blob.path);
  return path.is_absolute() ? path : (m_root / path).lexically_normal();
}

fs::path TraceSet::definition_path(const Definition& def) const {
  return m_root / "definitions" / def.op_type / (def.name + ".json");
}

fs::path TraceSet::workload_path(const Definition& def) const {
  return m_root / "workloads" / def.op_type / (def.name + ".jsonl");
}

fs::path TraceSet::solution_path(const Solution& solution, const Definition& def) const {
  return m_root / "solutions" / solution.author / def.op_type / def.name /
         (solution.name + ".json");
}

fs::path TraceSet::trace_path(const Solution& solution, const Definition& def) const {
  return m_root / "traces" / solution.author / def.op_type / (def.name + ".jsonl");
}

util::Status TraceSet::add_definition(const Definition& def) {
  fs::path file = definition_path(def);
  PTXBENCH_TRY(check_component("definition name", def.name));
  PTXBENCH_TRY(check_component("op_type", def.op_type));
  PTXBENCH_TRY(check_new_name(m_definitions, m_definition_files, def, file, "definition"));
  PTXBENCH_TRY(save_definition(file, def));
  m_definitions.push_back(def);
  m_definition_files.push_back(file.lexically_relative(m_root));
  return util::Ok{};
}

util::Status TraceSet::add_solution(const Solution& solution) {
  const Definition* def = find_definition(solution.definition);
  if (!def)
    return invalid("solution \"" + solution.name + "\": unknown definition \"" +
                   solution.definition + "\"");
  fs::path file = solution_path(solution, *def);
  PTXBENCH_TRY(check_component("solution name", solution.name));
  PTXBENCH_TRY(check_component("author", solution.author));
  PTXBENCH_TRY(check_new_name(m_solutions, m_solution_files, solution, file, "solution"));
  PTXBENCH_TRY(save_solution(file, solution));
  m_solutions.push_back(solution);
  m_solution_files.push_back(file.lexically_relative(m_root));
  return util::Ok{};
}

util::Status TraceSet::add_workload(const Trace& trace) {
  const Definition* def = find_definition(trace.definition);
  if (!trace.is_workload_trace())
    return invalid("add_workload: the trace has an evaluation");
  if (!def)
    return invalid("workload: unknown definition \"" + trace.definition + "\"");
  fs::path file = workload_path(*def);
  PTXBENCH_TRY(validate_workload(trace.workload, *def, file.string()));
  PTXBENCH_TRY(append_trace(file, trace));
  m_workloads.push_back(trace);
  m_workload_files.push_back(file.lexically_relative(m_root));
  return util::Ok{};
}

util::Status TraceSet::add_trace(const Trace& trace) {
  const Definition* def = find_definition(trace.definition);
  const Solution* solution = trace.solution ? find_solution(*trace.solution) : nullptr;
  if (trace.is_workload_trace())
    return invalid("add_trace: a workload trace has no evaluation");
  if (!def)
    return invalid("trace: unknown definition \"" + trace.definition + "\"");
  if (!solution)
    return invalid("trace: unknown solution \"" + trace.solution.value_or("") + "\"");
  fs::path file = trace_path(*solution, *def);
  PTXBENCH_TRY(append_trace(file, trace));
  m_traces.push_back(trace);
  m_trace_files.push_back(file.lexically_relative(m_root));
  return util::Ok{};
}

} // namespace ptxbench::trace
