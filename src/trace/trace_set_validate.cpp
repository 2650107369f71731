// TraceSet::validate(): what upstream's validator checks (§1.6) plus a few references.
//
// Each loaded object remembers the file it came from (relative to the root). Its expected
// place is computed from its own fields — definitions/<op_type>/<name>.json,
// solutions/<author>/<op_type>/<definition>/<name>.json, workloads/<op_type>/<definition>.jsonl,
// traces/<author>/<op_type>/<definition>.jsonl — and any difference (wrong depth or a
// component that is not the right op_type/author/definition/name) is one problem. Workload
// and trace lines also need a known definition (and traces a known solution), workloads must
// match their definition (validate_workload) and uuids are unique per definition.
//
// Invariants: validate() never stops at the first problem and reports each problem once,
// in load order.
#include "trace/trace_set.hpp"

#include <set>

namespace ptxbench::trace {
namespace fs = std::filesystem;
namespace {

void report(std::vector<util::Error>& problems, std::string message) {
  for (const util::Error& seen : problems)
    if (seen.message == message)
      return;
  problems.push_back(util::make_error(util::ErrorKind::invalid_input, std::move(message)));
}

void check_place(std::vector<util::Error>& problems, const fs::path& actual,
                 const fs::path& expected) {
  if (actual == expected)
    return;
  auto depth = [](const fs::path& p) { return std::distance(p.begin(), p.end()); };
  std::string why = depth(actual) != depth(expected) ? "wrong depth" : "wrong path component";
  report(problems, actual.string() + ": misplaced (" + why + "), expected " + expected.string());
}

} // namespace

std::vector<util::Error> TraceSet::validate() const {
  std::vector<util::Error> problems;
  check_definition_places(problems);
  check_solution_places(problems);
  check_workload_places(problems);
  check_trace_places(problems);
  check_workload_contents(problems);
  return problems;
}

void TraceSet::check_definition_places(std::vector<util::Error>& problems) const {
  for (std::size_t i = 0; i < m_definitions.size(); ++i) {
    const Definition& def = m_definitions[i];
    check_place(problems, m_definition_files[i],
                fs::path("definitions") / def.op_type / (def.name + ".json"));
  }
}

void TraceSet::check_solution_places(std::vector<util::Error>& problems) const {
  for (std::size_t i = 0; i < m_solutions.size(); ++i) {
    const Solution& solution = m_solutions[i];
    const Definition* def = find_definition(solution.definition);
    if (!def) {
      report(problems, m_solution_files[i].string() + ": solution \"" + solution.name +
                           "\" names unknown definition \"" + solution.definition + "\"");
      continue;
    }
    check_place(problems, m_solution_files[i],
                solution_path(solution, *def).lexically_relative(m_root));
  }
}

void TraceSet::check_workload_places(std::vector<util::Error>& problems) const {
  for (std::size_t i = 0; i < m_workloads.size(); ++i) {
    const Definition* def = find_definition(m_workloads[i].definition);
    if (!def) {
      report(problems, m_workload_files[i].string() + ": unknown definition \"" +
                           m_workloads[i].definition + "\"");
      continue;
    }
    check_place(problems, m_workload_files[i], workload_path(*def).lexically_relative(m_root));
  }
}

void TraceSet::check_trace_places(std::vector<util::Error>& problems) const {
  for (std::size_t i = 0; i < m_traces.size(); ++i) {
    const Trace& trace = m_traces[i];
    const Definition* def = find_definition(trace.definition);
    const Solution* solution = trace.solution ? find_solution(*trace.solution) : nullptr;
    std::string file = m_trace_files[i].string();
    if (!def)
      report(problems, file + ": unknown definition \"" + trace.definition + "\"");
    if (!solution)
      report(problems, file + ": unknown solution \"" + trace.solution.value_or("") + "\"");
    if (def && solution)
      check_place(problems, m_trace_files[i],
                  trace_path(*solution, *def).lexically_relative(m_root));
  }
}

void TraceSet::check_workload_contents(std::vector<util::Error>& problems) const {
  std::set<std::pair<std::string, std::string>> uuids;
  for (std::size_t i = 0; i < m_workloads.size(); ++i) {
    const Trace& trace = m_workloads[i];
    std::string file = m_workload_files[i].string();
    if (!uuids.emplace(trace.definition, trace.workload.uuid).second)
      report(problems, file + ": duplicate workload uuid \"" + trace.workload.uuid + "\"");
    const Definition* def = find_definition(trace.definition);
    if (!def)
      continue;
    if (auto valid =
            validate_workload(trace.workload, *def, file + " (uuid " + trace.workload.uuid + ")");
        !valid)
      report(problems, valid.error().message);
  }
}

} // namespace ptxbench::trace
