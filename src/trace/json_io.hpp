// Reading, writing and validating FlashInfer-Trace JSON (reference/flashinfer-trace.md §1, §9).
// Readers ignore key order and unknown keys and accept the legacy and fork spellings; writers
// emit the current upstream shape with keys in declaration order. Every reader error names the
// origin (file, and line for JSONL), the JSON path and what is wrong:
//   definitions/gemm/x.json: $.inputs.A.dtype: unknown dtype "bf16"
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::trace {

std::string_view to_string(DType);
std::optional<DType> parse_dtype(std::string_view);
std::size_t dtype_bits(DType);
std::string_view to_string(EvaluationStatus);
std::optional<EvaluationStatus> parse_status(std::string_view);
std::string_view to_string(Language);
std::optional<Language> parse_language(std::string_view);
// Binding::none is "" (the spelling the solution hash uses for a null binding).
std::string_view to_string(Binding);
std::optional<Binding> parse_binding(std::string_view);

// `origin` names the file (and line for JSONL) in error messages.
util::Expected<Definition> definition_from_json(const Json&, const std::string& origin);
util::Expected<Workload> workload_from_json(const Json&, const std::string& origin);
util::Expected<Solution> solution_from_json(const Json&, const std::string& origin);
util::Expected<Trace> trace_from_json(const Json&, const std::string& origin);
util::Expected<Evaluation> evaluation_from_json(const Json&, const std::string& origin);

// Writers throw util::Fatal on values that may not be written (an Evaluation breaking the
// status/correctness/performance table, a non-finite Performance field); the save_* and
// append_* functions below check first and return those as errors instead.
Json to_json(const Definition&);
Json to_json(const Workload&);
Json to_json(const Solution&);
Json to_json(const Trace&);
Json to_json(const Evaluation&);

// Checks that a value may be written: the presence table of §1.5, finite non-negative
// performance, non-empty required strings.
util::Status check_writable(const Evaluation&);

// Checks a workload against its definition: axes are exactly the var axes, all > 0; inputs
// are exactly the definition's inputs.
util::Status validate_workload(const Workload&, const Definition&, const std::string& origin);

// Parses JSON text, accepting bare NaN/Infinity/-Infinity tokens (read as the strings
// "NaN"/"Infinity"/"-Infinity"). Errors give origin, line and column.
util::Expected<Json> parse_json_text(std::string_view text, const std::string& origin);

util::Expected<Definition> load_definition(const std::filesystem::path&);
util::Expected<Solution> load_solution(const std::filesystem::path&);
// Workload files and trace files alike; empty lines are skipped.
util::Expected<std::vector<Trace>> load_traces_jsonl(const std::filesystem::path&);
// indent=2, unset optionals omitted, trailing newline; atomic (a failing write keeps the old file).
util::Status save_definition(const std::filesystem::path&, const Definition&);
util::Status save_solution(const std::filesystem::path&, const Solution&);
// One compact line, newline repair of the existing file first.
util::Status append_trace(const std::filesystem::path&, const Trace&);
// Rewrites a whole JSONL file atomically.
util::Status save_traces_jsonl(const std::filesystem::path&, const std::vector<Trace>&);

// The JSONL writer's exact spelling: no spaces, floats in shortest round-trip form as
// pydantic writes them (1.0, 0.0001, 1e-7, 1e20), non-ASCII kept as UTF-8.
std::string dump_compact(const Json&);
// The definition/solution writer's spelling: indent=2, same scalar spelling.
std::string dump_pretty(const Json&);

// SHA-1 over definition, language, entry_point, binding ("" if none), each dependency, then
// each source's path and content, concatenated without separators (§1.4).
std::string solution_hash(const Solution&);
// "<name>_<hash[:8]>", the name FIBServe gives every submission.
std::string unique_solution_name(const Solution&);

} // namespace ptxbench::trace
