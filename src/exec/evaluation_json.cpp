// The Evaluation back from the JSON evaluation_report.cpp writes (`ptxbench eval --json`: the
// status, the check report and the FlashInfer-Trace line whose `evaluation.ptxbench` object
// carries the extras). Every field that JSON carries comes back; what it does not carry stays
// default: the check report beyond its arch, atol/rtol, the candidate's output (folded into the
// trace's log), the sanitizer, ncu audit and debugger passes, and the counting pass's launch count
// and the timing phase's latency inside the launch evidence. The max errors come back as reported
// (NaN or +inf when a candidate NaN or inf failed), so reported_*_error() round-trips. Decoding
// never throws: a wrong shape is the first error with its JSON path.
#include "exec/evaluation.hpp"
#include "protocol/protocol.hpp"
#include "trace/json_io.hpp"
#include "util/json_number.hpp"
#include "util/json_reader.hpp"

#include <charconv>
#include <cmath>

namespace ptxbench::exec {
namespace {

using Json = trace::Json;
using util::Emptiness;
using util::JsonReader;
using util::key_path;

constexpr auto kExact = util::NonFiniteSpelling::exact;
const Json kNull;

const Json& member(JsonReader& r, const Json& object, const std::string& path,
                   std::string_view key) {
  const Json* found = r.required(object, path, key);
  return found ? *found : kNull;
}

double number(JsonReader& r, const Json& object, const std::string& path, std::string_view key) {
  return r.number_or_nonfinite_at(member(r, object, path, key), key_path(path, key), kExact);
}

// null: nothing was measured (a timing phase that failed before its first trial).
double nullable_number(JsonReader& r, const Json& object, const std::string& path,
                       std::string_view key) {
  const Json& value = member(r, object, path, key);
  return value.is_null() ? 0.0 : r.number_or_nonfinite_at(value, key_path(path, key), kExact);
}

std::int64_t integer(JsonReader& r, const Json& object, const std::string& path,
                     std::string_view key) {
  return r.integer_at(member(r, object, path, key), key_path(path, key));
}

std::uint64_t count(JsonReader& r, const Json& object, const std::string& path,
                    std::string_view key) {
  std::int64_t value = integer(r, object, path, key);
  if (value < 0)
    r.fail(key_path(path, key), "must be >= 0");
  return value < 0 ? 0 : static_cast<std::uint64_t>(value);
}

bool flag(JsonReader& r, const Json& object, const std::string& path, std::string_view key) {
  return r.boolean_at(member(r, object, path, key), key_path(path, key));
}

std::vector<std::string> strings(JsonReader& r, const Json& object, const std::string& path,
                                 std::string_view key) {
  if (!r.required(object, path, key))
    return {};
  return r.string_list(object, path, key, Emptiness::allowed);
}

std::vector<double> numbers(JsonReader& r, const Json& object, const std::string& path,
                            std::string_view key) {
  const Json& array = member(r, object, path, key);
  std::vector<double> out;
  if (r.ok() && !array.is_array())
    r.fail(key_path(path, key), "expected an array of numbers");
  for (std::size_t i = 0; r.ok() && array.is_array() && i < array.size(); ++i)
    out.push_back(
        r.number_or_nonfinite_at(array[i], util::index_path(key_path(path, key), i), kExact));
  return out;
}

// The row of `table` whose name is the string at `path`; the first row after an error.
template <typename Table>
auto named(JsonReader& r, const Table& table, const Json& value, const std::string& path,
           std::string_view what) {
  std::string name = r.string_at(value, path, Emptiness::rejected);
  for (const auto& row : table)
    if (row.name == name)
      return row;
  if (r.ok())
    r.fail(path, "unknown " + std::string(what) + " \"" + name + "\"");
  return table.front();
}

DynamicState state_at(JsonReader& r, const Json& object, const std::string& path,
                      std::string_view key) {
  return named(r, kDynamicStates, member(r, object, path, key), key_path(path, key),
               "dynamic state")
      .state;
}

CompareStats read_correctness(JsonReader& r, const Json& c, const std::string& path,
                              Evaluation& ev) {
  CompareStats out;
  out.elements = count(r, c, path, "elements");
  out.failed = count(r, c, path, "failed");
  out.candidate_nan = count(r, c, path, "candidate_nan");
  out.candidate_inf = count(r, c, path, "candidate_inf");
  out.reference_nonfinite = count(r, c, path, "reference_nonfinite");
  out.max_abs_error = number(r, c, path, "max_absolute_error");
  out.max_rel_error = number(r, c, path, "max_relative_error");
  ev.comparisons = r.string_list(c, path, "comparisons", Emptiness::allowed);
  ev.required_matched_ratio =
      r.optional_number(c, path, "required_matched_ratio", {0, 1}).value_or(1.0);
  ev.tolerated_failures =
      static_cast<std::uint64_t>(r.optional_integer(c, path, "tolerated_failures", 0).value_or(0));
  return out;
}

// The fields every service writes are required; the later ones default when absent.
TimingReport read_timing(JsonReader& r, const Json& t, const std::string& path) {
  TimingReport out;
  out.candidate_trial_ms = numbers(r, t, path, "candidate_trial_ms");
  out.reference_trial_ms = numbers(r, t, path, "reference_trial_ms");
  out.candidate_event_ms = numbers(r, t, path, "candidate_event_trial_ms");
  out.candidate_ms = nullable_number(r, t, path, "candidate_ms");
  out.reference_ms = nullable_number(r, t, path, "reference_ms");
  out.reference_cached = flag(r, t, path, "reference_cached");
  out.kernels = strings(r, t, path, "kernels");
  if (JsonReader::optional(t, "kernel_launches"))
    out.kernel_launches = r.string_list(t, path, "kernel_launches", Emptiness::allowed);
  if (JsonReader::optional(t, "reference_event_trial_ms"))
    out.reference_event_ms = numbers(r, t, path, "reference_event_trial_ms");
  out.mode = r.optional_string(t, path, "mode", Emptiness::rejected).value_or("strict");
  out.strict_reason = r.optional_string(t, path, "strict_reason", Emptiness::allowed).value_or("");
  out.inputs_warm = r.optional_boolean(t, path, "inputs_warm").value_or(false);
  out.preheat_ms = r.optional_number(t, path, "preheat_ms", {0, 1e12}).value_or(0.0);
  out.retimed_pairs = r.string_list(t, path, "retimed_pairs", Emptiness::allowed);
  out.interleave_calls =
      static_cast<int>(r.optional_integer(t, path, "interleave_calls", 0).value_or(0));
  out.timed_calls = static_cast<int>(r.optional_integer(t, path, "timed_calls", 0).value_or(0));
  out.checked_calls = static_cast<int>(r.optional_integer(t, path, "checked_calls", 0).value_or(0));
  out.staging_ms = r.optional_number(t, path, "staging_ms", {0, 1e12}).value_or(0.0);
  out.checks_ms = r.optional_number(t, path, "checks_ms", {0, 1e12}).value_or(0.0);
  out.window_wait_ms = r.optional_number(t, path, "window_wait_ms", {0, 1e12}).value_or(0.0);
  out.candidate_overhead_ms = r.optional_number(t, path, "candidate_overhead_ms", {-1e12, 1e12});
  out.reference_overhead_ms = r.optional_number(t, path, "reference_overhead_ms", {-1e12, 1e12});
  out.calibrated_overhead_ms = r.optional_number(t, path, "calibrated_overhead_ms", {-1e12, 1e12});
  out.unexplained_ms = r.optional_number(t, path, "unexplained_ms", {-1e12, 1e12});
  if (JsonReader::optional(t, "preload_calibration_ms"))
    out.preload_calibration_ms = numbers(r, t, path, "preload_calibration_ms");
  out.calibration_cap_ms = r.optional_number(t, path, "calibration_cap_ms", {-1e12, 1e12});
  out.calibration_capped = r.optional_boolean(t, path, "calibration_capped").value_or(false);
  out.speed_of_light_ms = r.optional_number(t, path, "speed_of_light_ms", {0, 1e12});
  out.phases_over_bound = r.string_list(t, path, "phases_over_bound", Emptiness::allowed);
  out.host_cpu_stall_share = r.optional_number(t, path, "host_cpu_stall_share", {0, 1});
  out.supervisor_run_delay_ms = r.optional_number(t, path, "supervisor_run_delay_ms", {0, 1e12});
  return out;
}

void read_families(JsonReader& r, const Json& families, const std::string& path,
                   DynamicReport& out) {
  if (!r.expect_object(families, path))
    return;
  for (const auto& [name, f] : families.items()) {
    std::string at = key_path(path, name);
    if (!r.expect_object(f, at))
      return;
    sass::Family family = named(r, sass::kFamilies, Json(name), at, "instruction family").family;
    out.families.push_back({family, static_cast<std::size_t>(count(r, f, at, "static")),
                            number(r, f, at, "executed"), state_at(r, f, at, "state")});
  }
}

DynamicReport read_dynamic(JsonReader& r, const Json& d, const std::string& path) {
  DynamicReport out;
  out.verdict = state_at(r, d, path, "verdict");
  read_families(r, member(r, d, path, "families"), key_path(path, "families"), out);
  out.tensor_flops = number(r, d, path, "tensor_flops");
  const Json& coverage = member(r, d, path, "tensor_path_coverage");
  if (coverage.is_null())
    out.coverage_unknown =
        r.optional_string(d, path, "coverage_unknown", Emptiness::allowed).value_or("unknown");
  else
    out.coverage =
        r.number_or_nonfinite_at(coverage, key_path(path, "tensor_path_coverage"), kExact);
  out.foreign_ranges =
      static_cast<int>(r.optional_integer(d, path, "foreign_kernels_not_credited", 0).value_or(0));
  out.reason = r.optional_string(d, path, "reason", Emptiness::allowed).value_or("");
  out.counts_cache = r.optional_string(d, path, "counts_cache", Emptiness::rejected).value_or("");
  if (const Json* counter = JsonReader::optional(d, "counter"))
    out.raw = *counter;
  return out;
}

TracedCall read_call(JsonReader& r, const Json& call, const std::string& path) {
  TracedCall out;
  if (!r.expect_object(call, path))
    return out;
  out.set = static_cast<int>(integer(r, call, path, "set"));
  out.repeat = flag(r, call, path, "repeat");
  out.launches = strings(r, call, path, "kernels");
  if (!member(r, call, path, "latency_ms").is_null())
    out.latency_ms = number(r, call, path, "latency_ms");
  return out;
}

protocol::KernelSet read_kernel_set(JsonReader& r, const Json& set, const std::string& path) {
  protocol::KernelSet out;
  if (!r.expect_object(set, path))
    return out;
  out.kernels = strings(r, set, path, "kernels");
  out.calls = static_cast<int>(integer(r, set, path, "calls"));
  return out;
}

const Json& array_member(JsonReader& r, const Json& object, const std::string& path,
                         std::string_view key) {
  const Json& value = member(r, object, path, key);
  if (r.ok() && !value.is_array())
    r.fail(key_path(path, key), "expected an array");
  return value.is_array() ? value : kNull;
}

LaunchEvidence read_launches(JsonReader& r, const Json& l, const std::string& path) {
  LaunchEvidence out;
  const Json& calls = array_member(r, l, path, "correctness_calls");
  for (std::size_t i = 0; i < calls.size(); ++i)
    out.correctness.push_back(
        read_call(r, calls[i], util::index_path(key_path(path, "correctness_calls"), i)));
  const Json& timed = array_member(r, l, path, "timed_calls");
  for (std::size_t i = 0; i < timed.size(); ++i)
    out.timed.push_back(
        read_kernel_set(r, timed[i], util::index_path(key_path(path, "timed_calls"), i)));
  out.counted = strings(r, l, path, "counted_kernels");
  out.refused = strings(r, l, path, "refused_entry_points");
  return out;
}

std::vector<util::Phase> read_phases(JsonReader& r, const Json& phases, const std::string& path) {
  std::vector<util::Phase> out;
  if (!r.expect_object(phases, path))
    return out;
  for (const auto& [key, value] : phases.items()) {
    double ms = r.number_at(value, key_path(path, key));
    std::string name = key.ends_with("_ms") ? key.substr(0, key.size() - 3) : key;
    out.push_back({name, std::chrono::microseconds(std::llround(ms * 1000.0))});
  }
  return out;
}

std::uint64_t read_seed(JsonReader& r, const Json& x, const std::string& path) {
  std::string text = r.string(x, path, "seed", Emptiness::rejected);
  std::uint64_t seed = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (r.ok() && (error != std::errc() || end != text.data() + text.size()))
    r.fail(key_path(path, "seed"), "expected a decimal 64-bit seed, got \"" + text + "\"");
  return seed;
}

void read_rule(JsonReader& r, const Json& x, const std::string& path, Evaluation& ev) {
  const Json* rule = JsonReader::optional(x, "rule");
  if (!rule || rule->is_null())
    return;
  Rule broken = named(r, kRules, *rule, key_path(path, "rule"), "rule").rule;
  ev.broken_rule = BrokenRule{broken, ev.message, ev.foreign_kernels};
}

void read_arch(JsonReader& r, const Json& x, const std::string& path, Evaluation& ev) {
  auto arch = r.optional_string(x, path, "arch", Emptiness::rejected);
  if (!arch)
    return;
  if (auto parsed = compile::parse_arch(*arch))
    ev.check.arch = *parsed;
  else
    r.fail(key_path(path, "arch"), "unknown arch \"" + *arch + "\"");
}

void read_optional_parts(JsonReader& r, const Json& x, const std::string& p, Evaluation& ev) {
  if (const Json* c = r.optional_object(x, p, "correctness"))
    ev.correctness = read_correctness(r, *c, key_path(p, "correctness"), ev);
  if (const Json* t = r.optional_object(x, p, "timing"))
    ev.timing = read_timing(r, *t, key_path(p, "timing"));
  if (const Json* d = r.optional_object(x, p, "dynamic"))
    ev.dynamic = read_dynamic(r, *d, key_path(p, "dynamic"));
  if (const Json* l = r.optional_object(x, p, "launches"))
    ev.launches = read_launches(r, *l, key_path(p, "launches"));
  if (const Json* startup = r.optional_object(x, p, "child_startup_ms"))
    ev.child_startup = *startup;
  ev.jit_ms = r.optional_number(x, p, "jit_ms", {0, 1e12});
  ev.child_reads_confined = r.optional_boolean(x, p, "child_reads_confined");
  if (const Json* language = JsonReader::optional(x, "language"))
    ev.check.language =
        compile::parse_language(language->is_string() ? language->get<std::string>() : "")
            .value_or(compile::Language::cuda);
  if (const Json* clocks = JsonReader::optional(x, "clocks"))
    ev.clocks = *clocks;
  if (const Json* phases = JsonReader::optional(x, "phases"))
    ev.phases = read_phases(r, *phases, key_path(p, "phases"));
}

void read_extras(JsonReader& r, const Json& x, const std::string& p, Evaluation& ev) {
  if (!r.expect_object(x, p))
    return;
  ev.message = r.string(x, p, "message", Emptiness::allowed);
  read_arch(r, x, p, ev);
  if (JsonReader::optional(x, "seed"))
    ev.seed = read_seed(r, x, p);
  ev.gpu_ran = !JsonReader::optional(x, "needs_gpu");
  if (!ev.gpu_ran)
    ev.needs_gpu = r.string(x, p, "needs_gpu", Emptiness::allowed);
  ev.sets = static_cast<int>(integer(r, x, p, "input_sets"));
  read_optional_parts(r, x, p, ev);
  ev.violations = r.string_list(x, p, "violations", Emptiness::allowed);
  ev.foreign_kernels = r.string_list(x, p, "foreign_kernels", Emptiness::allowed);
  read_rule(r, x, p, ev);
}

void read_trace_evaluation(JsonReader& r, const trace::Evaluation& e, Evaluation& ev) {
  ev.status = e.status;
  ev.gpu = e.environment.hardware;
  ev.libs = e.environment.libs;
  for (const auto& [name, version] : e.environment.libs)
    if (name == "baseline")
      ev.library = version;
  ev.timestamp = e.timestamp;
  if (e.ptxbench)
    read_extras(r, *e.ptxbench, "$.trace.evaluation.ptxbench", ev);
}

// A trace reader's error, its path re-rooted at "$.trace".
util::Error under_trace(util::Error error, const std::string& origin) {
  std::string head = origin + ": $";
  if (error.message.starts_with(head))
    error.message.insert(head.size(), ".trace");
  return error;
}

} // namespace

util::Expected<Evaluation> evaluation_from_trace(const trace::Trace& trace,
                                                 const std::string& origin) {
  JsonReader reader(origin);
  Evaluation ev;
  ev.problem = trace.definition;
  ev.solution_name = trace.solution.value_or("");
  if (trace.evaluation)
    read_trace_evaluation(reader, *trace.evaluation, ev);
  return reader.finish(std::move(ev));
}

util::Expected<Evaluation> evaluation_from_json(const Json& json, const std::string& origin) {
  JsonReader reader(origin);
  const Json* trace =
      reader.expect_object(json, "$") ? reader.required(json, "$", "trace") : nullptr;
  if (!trace)
    return reader.finish(Evaluation{});
  auto read = trace::trace_from_json(*trace, origin);
  if (!read)
    return under_trace(read.take_error(), origin);
  return evaluation_from_trace(*read, origin);
}

} // namespace ptxbench::exec
