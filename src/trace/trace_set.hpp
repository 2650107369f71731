// A FlashInfer-Trace dataset on disk (reference/flashinfer-trace.md §1.6):
//   definitions/<op_type>/<name>.json
//   workloads/<op_type>/<definition>.jsonl
//   solutions/<author>/<op_type>/<definition>/<name>.json
//   traces/<author>/<op_type>/<definition>.jsonl
//   blob/...
// Loading is recursive and sorted by path, so depth is not enforced on load; validate()
// enforces it and checks that path components equal op_type/author/definition/name.
#pragma once

#include "trace/json_io.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string_view>
#include <vector>

namespace ptxbench::trace {

class TraceSet {
public:
  explicit TraceSet(std::filesystem::path root);

  // Duplicate definition or solution names, a non-workload line in workloads/ or a workload
  // line in traces/ are errors. A missing root is not_found.
  static util::Expected<TraceSet> load(const std::filesystem::path& root);

  const std::filesystem::path& root() const { return m_root; }
  const std::vector<Definition>& definitions() const { return m_definitions; }
  const std::vector<Solution>& solutions() const { return m_solutions; }
  const std::vector<Trace>& workloads() const { return m_workloads; }
  const std::vector<Trace>& traces() const { return m_traces; }

  const Definition* find_definition(std::string_view name) const;
  const Solution* find_solution(std::string_view name) const;
  const Trace* find_workload(std::string_view definition, std::string_view uuid) const;
  std::vector<const Trace*> workloads_for(std::string_view definition) const;
  std::vector<const Trace*> traces_for(std::string_view definition) const;
  std::vector<const Solution*> solutions_for(std::string_view definition) const;

  // A relative safetensors path is relative to the root; an absolute one is kept.
  std::filesystem::path resolve_blob(const SafetensorsInput&) const;

  // Where each object belongs (absolute, under root()).
  std::filesystem::path definition_path(const Definition&) const;
  std::filesystem::path workload_path(const Definition&) const;
  std::filesystem::path solution_path(const Solution&, const Definition&) const;
  std::filesystem::path trace_path(const Solution&, const Definition&) const;

  // Each adds in memory and writes to its place on disk; names must be new, the definition
  // (and for traces the solution) must already be known.
  util::Status add_definition(const Definition&);
  util::Status add_solution(const Solution&);
  util::Status add_workload(const Trace&);
  util::Status add_trace(const Trace&);

  // Every problem found (empty = valid): misplaced files (depth, path components), traces
  // naming unknown definitions or solutions, workloads not matching their definition,
  // duplicate workload uuids.
  std::vector<util::Error> validate() const;

private:
  util::Status load_definitions();
  util::Status load_solutions();
  util::Status load_jsonl(std::string_view folder, std::vector<Trace>& into,
                          std::vector<std::filesystem::path>& files);
  void check_definition_places(std::vector<util::Error>& problems) const;
  void check_solution_places(std::vector<util::Error>& problems) const;
  void check_workload_places(std::vector<util::Error>& problems) const;
  void check_trace_places(std::vector<util::Error>& problems) const;
  void check_workload_contents(std::vector<util::Error>& problems) const;

  std::filesystem::path m_root;
  std::vector<Definition> m_definitions;
  std::vector<std::filesystem::path> m_definition_files; // relative to m_root
  std::vector<Solution> m_solutions;
  std::vector<std::filesystem::path> m_solution_files;
  std::vector<Trace> m_workloads;
  std::vector<std::filesystem::path> m_workload_files;
  std::vector<Trace> m_traces;
  std::vector<std::filesystem::path> m_trace_files;
};

} // namespace ptxbench::trace
