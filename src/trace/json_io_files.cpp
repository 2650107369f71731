// Files of FlashInfer-Trace objects. Definitions and solutions are one pretty-printed object
// per file (indent 2, trailing newline), replaced atomically. Workload and trace files are
// JSONL: one compact object per line, empty lines skipped on read, appended with newline
// repair. Every writer reads its own output back through the reader first, so a value that
// could not be loaded again is refused before the file is touched.
#include "trace/json_io.hpp"
#include "util/fs.hpp"

namespace ptxbench::trace {
namespace {

template <typename T, typename FromJson>
util::Expected<T> load_object(const std::filesystem::path& path, FromJson from_json) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  PTXBENCH_TRY_ASSIGN(auto json, parse_json_text(text, path.string()));
  return from_json(json, path.string());
}

template <typename FromJson>
util::Status check_readable(const Json& json, const std::filesystem::path& path,
                            FromJson from_json) {
  PTXBENCH_TRY(from_json(json, path.string()));
  return util::Ok{};
}

bool is_blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

util::Expected<std::string> trace_line(const Trace& trace, const std::filesystem::path& path) {
  if (trace.evaluation) {
    if (auto writable = check_writable(*trace.evaluation); !writable)
      return util::make_error(writable.error().kind,
                              path.string() + ": " + writable.error().message);
  }
  Json json = to_json(trace);
  PTXBENCH_TRY(check_readable(json, path, trace_from_json));
  return dump_compact(json);
}

} // namespace

util::Expected<Definition> load_definition(const std::filesystem::path& path) {
  return load_object<Definition>(path, definition_from_json);
}

util::Expected<Solution> load_solution(const std::filesystem::path& path) {
  return load_object<Solution>(path, solution_from_json);
}

util::Expected<std::vector<Trace>> load_traces_jsonl(const std::filesystem::path& path) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  std::vector<Trace> traces;
  std::string_view rest = text;
  for (std::size_t line_number = 1; !rest.empty(); ++line_number) {
    std::size_t end = std::min(rest.find('\n'), rest.size());
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (is_blank(line))
      continue;
    std::string origin = path.string() + ":" + std::to_string(line_number);
    PTXBENCH_TRY_ASSIGN(auto json, parse_json_text(line, origin));
    PTXBENCH_TRY_ASSIGN(auto trace, trace_from_json(json, origin));
    traces.push_back(std::move(trace));
  }
  return traces;
}

util::Status save_definition(const std::filesystem::path& path, const Definition& def) {
  Json json = to_json(def);
  PTXBENCH_TRY(check_readable(json, path, definition_from_json));
  return util::write_file_atomic(path, dump_pretty(json) + "\n");
}

util::Status save_solution(const std::filesystem::path& path, const Solution& solution) {
  Json json = to_json(solution);
  PTXBENCH_TRY(check_readable(json, path, solution_from_json));
  return util::write_file_atomic(path, dump_pretty(json) + "\n");
}

util::Status append_trace(const std::filesystem::path& path, const Trace& trace) {
  PTXBENCH_TRY_ASSIGN(auto line, trace_line(trace, path));
  return util::append_line(path, line);
}

util::Status save_traces_jsonl(const std::filesystem::path& path,
                               const std::vector<Trace>& traces) {
  std::string content;
  for (const Trace& trace : traces) {
    PTXBENCH_TRY_ASSIGN(auto line, trace_line(trace, path));
    (content += line) += '\n';
  }
  return util::write_file_atomic(path, content);
}

} // namespace ptxbench::trace
