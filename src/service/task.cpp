#include "service/task.hpp"

#include "exec/evaluation.hpp"
#include "trace/json_io.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <random>

namespace ptxbench::service {
namespace {

// Upper bounds that keep one request from holding a GPU for hours.
constexpr std::int64_t kMaxSets = 16;
constexpr std::int64_t kMaxTrials = 100;
constexpr std::int64_t kMaxWarmup = 1000;
constexpr std::int64_t kMaxIterations = 10000;
constexpr double kMaxTimeoutS = 3600;

constexpr std::array<std::string_view, 10> kRequestKeys{
    "solution",   "arch",    "workload_uuids",      "sets",           "trials", "warmup",
    "iterations", "timeout", "baseline_cache_mode", "sanitizer_types"};
// FlashInfer-Trace Solution fields; name, author, spec and description are accepted and not
// used (the service names the solution by its content hash).
constexpr std::array<std::string_view, 6> kSolutionKeys{"definition", "sources", "name",
                                                        "author",     "spec",    "description"};

util::Error bad(std::string what) {
  return util::make_error(util::ErrorKind::invalid_input, std::move(what));
}

util::Status only_keys(const Json& object, std::span<const std::string_view> keys,
                       std::string_view where) {
  for (const auto& [key, value] : object.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      return bad(fmt::format("{}: unknown field \"{}\"", where, key));
  return util::Ok{};
}

// The integer at `key` within [min, max], or `fallback` when absent.
util::Expected<int> bounded_int(const Json& body, const char* key, std::int64_t min,
                                std::int64_t max, int fallback) {
  if (!body.contains(key))
    return fallback;
  const Json& value = body[key];
  if (!value.is_number_integer() || value.get<std::int64_t>() < min ||
      value.get<std::int64_t>() > max)
    return bad(fmt::format("\"{}\" must be an integer from {} to {}", key, min, max));
  return static_cast<int>(value.get<std::int64_t>());
}

util::Expected<std::string> single_source(const Json& solution) {
  const Json* sources = solution.contains("sources") ? &solution["sources"] : nullptr;
  if (sources == nullptr || !sources->is_array() || sources->size() != 1)
    return bad("solution.sources must hold exactly one file: [{\"path\": \"kernel.cu\", "
               "\"content\": \"...\"}]");
  const Json& file = (*sources)[0];
  if (!file.is_object() || !file.contains("content") || !file["content"].is_string() ||
      (file.contains("path") && !file["path"].is_string()))
    return bad("solution.sources[0] must be {\"path\": \"kernel.cu\", \"content\": \"...\"}");
  if (auto keys = only_keys(file, std::array<std::string_view, 2>{"path", "content"},
                            "solution.sources[0]");
      !keys)
    return keys.take_error();
  if (file["content"].get<std::string>().empty())
    return bad("solution.sources[0].content is empty");
  return file["content"].get<std::string>();
}

util::Expected<const suite::Problem*> problem_of(const Json& solution, const suite::Suite& suite) {
  if (!solution.contains("definition") || !solution["definition"].is_string())
    return bad("solution.definition must name a problem (GET /definitions lists them)");
  return suite.find(solution["definition"].get<std::string>());
}

util::Status check_workloads(const Json& body, const suite::Problem& problem) {
  if (!body.contains("workload_uuids") || body["workload_uuids"].is_null())
    return util::Ok{};
  const Json& uuids = body["workload_uuids"];
  if (!uuids.is_array())
    return bad("\"workload_uuids\" must be a list of strings or null");
  for (const Json& uuid : uuids)
    if (uuid.is_string() && uuid.get<std::string>() == problem.workload.uuid)
      return util::Ok{};
  return util::make_error(util::ErrorKind::not_found,
                          fmt::format("No workloads found for definition: {} (its workload is {})",
                                      problem.name(), problem.workload.uuid));
}

util::Status read_tool_fields(const Json& body, TaskKind kind, exec::EvalOptions& options) {
  if (body.contains("sanitizer_types")) {
    if (kind != TaskKind::sanitize)
      return bad("\"sanitizer_types\" belongs to POST /sanitize");
    if (body["sanitizer_types"] != Json::array({"memcheck"}))
      return bad("\"sanitizer_types\": this service runs [\"memcheck\"] only");
  }
  options.sanitize = kind == TaskKind::sanitize ? exec::Sanitize::memcheck : exec::Sanitize::off;
  options.audit = kind == TaskKind::profile ? exec::Audit::ncu : exec::Audit::none;
  return util::Ok{};
}

util::Expected<exec::ReferenceTiming> reference_timing(const Json& body) {
  if (!body.contains("baseline_cache_mode"))
    return exec::ReferenceTiming::interleave;
  const Json& mode = body["baseline_cache_mode"];
  if (mode == "bypass")
    return exec::ReferenceTiming::interleave;
  if (mode == "reuse")
    return exec::ReferenceTiming::cached;
  return bad("\"baseline_cache_mode\" must be \"reuse\" (cached reference latency) or "
             "\"bypass\" (time the reference in this evaluation)");
}

util::Status read_options(const Json& body, TaskKind kind, exec::EvalOptions& options) {
  std::string arch = body.contains("arch") && body["arch"].is_string()
                         ? body["arch"].get<std::string>()
                         : "sm_90a";
  auto parsed = compile::parse_arch(arch);
  if (!parsed || (body.contains("arch") && !body["arch"].is_string()))
    return bad("\"arch\" must be \"sm_90a\" or \"sm_100a\"");
  options.arch = *parsed;
  auto sets = bounded_int(body, "sets", 1, kMaxSets, options.sets);
  auto trials = bounded_int(body, "trials", 1, kMaxTrials, options.trials);
  auto warmup = bounded_int(body, "warmup", 0, kMaxWarmup, options.warmup);
  auto iterations = bounded_int(body, "iterations", 1, kMaxIterations, options.iterations);
  for (auto* value : {&sets, &trials, &warmup, &iterations})
    if (!*value)
      return value->take_error();
  options.sets = *sets;
  options.trials = *trials;
  options.warmup = *warmup;
  options.iterations = *iterations;
  if (body.contains("timeout")) {
    const Json& timeout = body["timeout"];
    if (!timeout.is_number() || timeout.get<double>() <= 0 || timeout.get<double>() > kMaxTimeoutS)
      return bad(fmt::format("\"timeout\" must be a number of seconds in (0, {}]", kMaxTimeoutS));
    options.timeout =
        std::chrono::milliseconds(static_cast<long long>(timeout.get<double>() * 1000));
  }
  auto timing = reference_timing(body);
  PTXBENCH_TRY(timing);
  options.reference_timing = *timing;
  return read_tool_fields(body, kind, options);
}

Json canonical_json(const TaskRequest& request, const Json& body) {
  const exec::EvalOptions& o = request.options;
  Json out{{"solution",
            {{"definition", request.problem},
             {"sources", Json::array({{{"path", "kernel.cu"}, {"content", request.source}}})}}},
           {"arch", compile::to_string(o.arch)},
           {"sets", o.sets},
           {"trials", o.trials},
           {"warmup", o.warmup},
           {"iterations", o.iterations},
           {"timeout", static_cast<double>(o.timeout.count()) / 1000.0},
           {"baseline_cache_mode",
            o.reference_timing == exec::ReferenceTiming::cached ? "reuse" : "bypass"}};
  if (body.contains("sanitizer_types"))
    out["sanitizer_types"] = body["sanitizer_types"];
  return out;
}

} // namespace

util::Expected<TaskRequest> parse_task_request(std::string_view body, TaskKind kind,
                                               const suite::Suite& suite) {
  auto json = trace::parse_json_text(body, "request body");
  PTXBENCH_TRY(json);
  if (!json->is_object())
    return bad("request body: expected a JSON object");
  if (auto keys = only_keys(*json, kRequestKeys, "request body"); !keys)
    return keys.take_error();
  if (!json->contains("solution") || !(*json)["solution"].is_object())
    return bad("\"solution\" must be an object: {\"definition\": PROBLEM, \"sources\": "
               "[{\"path\": \"kernel.cu\", \"content\": SOURCE}]}");
  const Json& solution = (*json)["solution"];
  if (auto keys = only_keys(solution, kSolutionKeys, "solution"); !keys)
    return keys.take_error();
  auto source = single_source(solution);
  PTXBENCH_TRY(source);
  auto problem = problem_of(solution, suite);
  PTXBENCH_TRY(problem);
  if (auto workloads = check_workloads(*json, **problem); !workloads)
    return workloads.take_error();
  TaskRequest request;
  request.kind = kind;
  request.problem = (*problem)->name();
  request.source = std::move(*source);
  request.solution_name = exec::solution_name(request.source, **problem);
  if (auto options = read_options(*json, kind, request.options); !options)
    return options.take_error();
  request.canonical = canonical_json(request, *json);
  return request;
}

Task new_task(const TaskRequest& request) {
  Task task;
  task.id = new_task_id();
  task.kind = request.kind;
  task.problem = request.problem;
  task.solution_name = request.solution_name;
  task.arch = request.options.arch;
  task.submitted_at = utc_now();
  return task;
}

Json task_json(const Task& task) {
  Json out{{"task_id", task.id},
           {"kind", to_string(task.kind)},
           {"status", to_string(task.state)},
           {"definition", task.problem},
           {"solution", task.solution_name},
           {"arch", compile::to_string(task.arch)},
           {"submitted_at", task.submitted_at}};
  if (!task.started_at.empty())
    out["started_at"] = task.started_at;
  if (!task.finished_at.empty())
    out["finished_at"] = task.finished_at;
  if (!task.device.empty())
    out["device"] = task.device;
  if (task.attempts > 1)
    out["attempts"] = task.attempts;
  if (task.result)
    out["result"] = *task.result;
  if (!task.needs_gpu.empty())
    out["needs_gpu"] = task.needs_gpu;
  if (!task.error.empty())
    out["error"] = task.error;
  return out;
}

std::string dump_json(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string new_task_id() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i)
    id += fmt::format("{:08x}", static_cast<std::uint32_t>(random()));
  return id;
}

bool is_task_id(std::string_view id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string utc_text(std::chrono::system_clock::time_point at) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(at);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(at.time_since_epoch()).count() % 1000;
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", text, millis);
}

std::string utc_now() {
  return utc_text(std::chrono::system_clock::now());
}

} // namespace ptxbench::service
