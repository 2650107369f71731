// The two JSON shapes the remote executor shares with `ptxbench serve`: the evaluation request
// it sends and the `ptxbench eval --json` result it reads back (docs/service.md).
#include "agent/remote_executor.hpp"
#include "exec/evaluation.hpp"
#include "trace/json_io.hpp"
#include "util/json_number.hpp"

#include <stdexcept>

namespace ptxbench::agent {
namespace {

using Json = nlohmann::ordered_json;

// A value of the right JSON type but outside what exec writes.
struct BadShape : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A number, or the strings exec writes for non-finite values ("NaN", "Infinity").
double number(const Json& value) {
  if (auto read = util::number_from_json(value, util::NonFiniteSpelling::exact))
    return *read;
  throw BadShape("expected a number, found " + value.dump());
}

std::vector<double> numbers(const Json& array) {
  std::vector<double> out;
  for (const Json& value : array)
    out.push_back(number(value));
  return out;
}

exec::CompareStats correctness_of(const Json& c) {
  exec::CompareStats out;
  out.elements = c.at("elements").get<std::uint64_t>();
  out.failed = c.at("failed").get<std::uint64_t>();
  out.candidate_nan = c.at("candidate_nan").get<std::uint64_t>();
  out.candidate_inf = c.at("candidate_inf").get<std::uint64_t>();
  out.reference_nonfinite = c.at("reference_nonfinite").get<std::uint64_t>();
  out.max_abs_error = number(c.at("max_absolute_error"));
  out.max_rel_error = number(c.at("max_relative_error"));
  return out;
}

exec::TimingReport timing_of(const Json& t) {
  exec::TimingReport out;
  out.candidate_trial_ms = numbers(t.at("candidate_trial_ms"));
  out.reference_trial_ms = numbers(t.at("reference_trial_ms"));
  out.candidate_event_ms = numbers(t.at("candidate_event_trial_ms"));
  // null: nothing was timed (the timing phase failed before its first trial ended)
  out.candidate_ms = t.at("candidate_ms").is_null() ? 0.0 : number(t.at("candidate_ms"));
  out.reference_ms = t.at("reference_ms").is_null() ? 0.0 : number(t.at("reference_ms"));
  out.reference_cached = t.at("reference_cached").get<bool>();
  out.kernels = t.at("kernels").get<std::vector<std::string>>();
  return out;
}

exec::DynamicState state_named(const std::string& name) {
  for (const auto& info : exec::kDynamicStates)
    if (info.name == name)
      return info.state;
  throw BadShape("unknown dynamic state \"" + name + "\"");
}

sass::Family family_named(const std::string& name) {
  for (const auto& info : sass::kFamilies)
    if (info.name == name)
      return info.family;
  throw BadShape("unknown instruction family \"" + name + "\"");
}

exec::Rule rule_named(const std::string& name) {
  for (const exec::RuleInfo& info : exec::kRules)
    if (info.name == name)
      return info.rule;
  throw BadShape("unknown rule \"" + name + "\"");
}

exec::DynamicReport dynamic_of(const Json& d) {
  exec::DynamicReport out;
  out.verdict = state_named(d.at("verdict").get<std::string>());
  for (const auto& [name, f] : d.at("families").items())
    out.families.push_back({family_named(name), f.at("static").get<std::size_t>(),
                            number(f.at("executed")),
                            state_named(f.at("state").get<std::string>())});
  out.tensor_flops = number(d.at("tensor_flops"));
  if (d.at("tensor_path_coverage").is_null())
    out.coverage_unknown = d.value("coverage_unknown", std::string("unknown"));
  else
    out.coverage = number(d.at("tensor_path_coverage"));
  out.foreign_ranges = d.value("foreign_kernels_not_credited", 0);
  if (d.contains("reason"))
    out.reason = d["reason"].get<std::string>();
  if (d.contains("counter"))
    out.raw = d["counter"];
  return out;
}

// The GPU part from a trace's evaluation and its `ptxbench` extras.
void read_evaluation(const trace::Evaluation& e, exec::Evaluation& ev) {
  ev.status = e.status;
  ev.gpu = e.environment.hardware;
  ev.libs = e.environment.libs;
  for (const auto& [name, version] : e.environment.libs)
    if (name == "baseline")
      ev.library = version;
  ev.timestamp = e.timestamp;
  if (!e.ptxbench)
    return;
  const Json& x = *e.ptxbench;
  ev.message = x.at("message").get<std::string>();
  ev.gpu_ran = !x.contains("needs_gpu");
  if (!ev.gpu_ran)
    ev.needs_gpu = x["needs_gpu"].get<std::string>();
  ev.sets = x.at("input_sets").get<int>();
  if (x.contains("correctness")) {
    const Json& c = x["correctness"];
    ev.correctness = correctness_of(c);
    ev.required_matched_ratio = c.value("required_matched_ratio", 1.0);
    ev.tolerated_failures = c.value("tolerated_failures", std::uint64_t{0});
  }
  if (x.contains("timing"))
    ev.timing = timing_of(x["timing"]);
  if (x.contains("dynamic"))
    ev.dynamic = dynamic_of(x["dynamic"]);
  if (x.contains("violations"))
    ev.violations = x["violations"].get<std::vector<std::string>>();
  if (x.contains("foreign_kernels"))
    ev.foreign_kernels = x["foreign_kernels"].get<std::vector<std::string>>();
  if (x.contains("rule") && !x["rule"].is_null())
    ev.broken_rule = exec::BrokenRule{rule_named(x["rule"].get<std::string>()), ev.message,
                                      ev.foreign_kernels};
}

util::Error bad_result(const std::string& what) {
  return util::make_error(util::ErrorKind::bad_response,
                          "the evaluation service's result is not `ptxbench eval --json` output: " +
                              what);
}

} // namespace

Json evaluate_request(const std::string& source, const suite::Problem& problem,
                      const exec::EvalOptions& options) {
  return {{"solution",
           {{"definition", problem.name()},
            {"sources", Json::array({{{"path", "kernel.cu"}, {"content", source}}})}}},
          {"arch", compile::to_string(options.arch)},
          {"sets", options.sets},
          {"trials", options.trials},
          {"warmup", options.warmup},
          {"iterations", options.iterations},
          {"timeout", static_cast<double>(options.timeout.count()) / 1000.0},
          {"baseline_cache_mode",
           options.reference_timing == exec::ReferenceTiming::cached ? "reuse" : "bypass"}};
}

util::Expected<RemoteResult> read_result(const Json& result, const std::string& needs_gpu,
                                         exec::CheckReport check) {
  if (!result.is_object() || !result.contains("trace") || !result.contains("check"))
    return bad_result("expected an object with \"status\", \"check\" and \"trace\"");
  if (result["check"].value("outcome", "") != exec::to_string(exec::CheckOutcome::ok))
    return bad_result("the service's build of the kernel failed where the local one succeeded");
  auto trace = trace::trace_from_json(result["trace"], "evaluation service result");
  if (!trace)
    return bad_result(trace.error().message);
  exec::Evaluation ev;
  ev.check = std::move(check);
  ev.problem = trace->definition;
  ev.solution_name = trace->solution.value_or("");
  ev.needs_gpu = needs_gpu;
  try {
    if (trace->evaluation)
      read_evaluation(*trace->evaluation, ev);
  } catch (const Json::exception& error) {
    return bad_result(error.what());
  } catch (const BadShape& error) {
    return bad_result(error.what());
  }
  return RemoteResult{std::move(ev), std::move(*trace)};
}

} // namespace ptxbench::agent
