#include "service/task.hpp"

#include "exec/evaluation.hpp"
#include "trace/json_io.hpp"
#include "util/json_reader.hpp"

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

// Each function below reads part of the request body into `in`, which keeps the first
// problem as "request body: <JSON path>: <what>" (invalid_input); the messages keep the
// documented shape in them, since they are the 400 body a client reads.

void only_keys(util::JsonReader& in, const Json& object, const std::string& path,
               std::span<const std::string_view> keys) {
  for (const auto& [key, value] : object.items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      in.fail(util::key_path(path, key), fmt::format("unknown field \"{}\"", key));
}

// The integer at `key` within [min, max], or `fallback` when absent.
int bounded_int(util::JsonReader& in, const Json& body, std::string_view key, std::int64_t min,
                std::int64_t max, int fallback) {
  const Json* value = util::JsonReader::optional(body, key);
  if (value == nullptr)
    return fallback;
  if (!value->is_number_integer() || value->get<std::int64_t>() < min ||
      value->get<std::int64_t>() > max) {
    in.fail(util::key_path("$", key), fmt::format("\"{}\" must be an integer from {} to {}, got {}",
                                                  key, min, max, value->dump()));
    return fallback;
  }
  return static_cast<int>(value->get<std::int64_t>());
}

std::string single_source(util::JsonReader& in, const Json& solution) {
  const std::string path = "$.solution.sources";
  const Json* sources = util::JsonReader::optional(solution, "sources");
  if (sources == nullptr || !sources->is_array() || sources->size() != 1) {
    in.fail(sources == nullptr ? "$.solution" : path,
            "solution.sources must hold exactly one file: [{\"path\": \"kernel.cu\", "
            "\"content\": \"...\"}]");
    return {};
  }
  const Json& file = (*sources)[0];
  const std::string at = util::index_path(path, 0);
  if (!in.expect_object(file, at))
    return {};
  only_keys(in, file, at, std::array<std::string_view, 2>{"path", "content"});
  in.optional_string(file, at, "path", util::Emptiness::allowed);
  std::string content = in.string(file, at, "content", util::Emptiness::allowed);
  if (in.ok() && content.empty())
    in.fail(util::key_path(at, "content"), "solution.sources[0].content is empty");
  return content;
}

std::string definition_of(util::JsonReader& in, const Json& solution) {
  const Json* definition = util::JsonReader::optional(solution, "definition");
  if (definition == nullptr || !definition->is_string()) {
    in.fail(definition == nullptr ? "$.solution" : "$.solution.definition",
            "solution.definition must name a problem (GET /definitions lists them)");
    return {};
  }
  return definition->get<std::string>();
}

// The listed workload uuids; nullopt when the body lists none (absent or null).
std::optional<std::vector<std::string>> workload_uuids(util::JsonReader& in, const Json& body) {
  const Json* uuids = util::JsonReader::optional(body, "workload_uuids");
  if (uuids == nullptr || uuids->is_null())
    return std::nullopt;
  if (!uuids->is_array()) {
    in.fail("$.workload_uuids", "\"workload_uuids\" must be a list of strings or null");
    return std::nullopt;
  }
  return in.strings_at(*uuids, "$.workload_uuids", util::Emptiness::allowed);
}

util::Status check_workloads(const std::optional<std::vector<std::string>>& uuids,
                             const suite::Problem& problem) {
  if (!uuids || std::find(uuids->begin(), uuids->end(), problem.workload.uuid) != uuids->end())
    return util::Ok{};
  return util::make_error(util::ErrorKind::not_found,
                          fmt::format("No workloads found for definition: {} (its workload is {})",
                                      problem.name(), problem.workload.uuid));
}

void read_tool_fields(util::JsonReader& in, const Json& body, TaskKind kind,
                      exec::EvalOptions& options) {
  if (const Json* types = util::JsonReader::optional(body, "sanitizer_types")) {
    if (kind != TaskKind::sanitize)
      in.fail("$.sanitizer_types", "\"sanitizer_types\" belongs to POST /sanitize");
    else if (*types != Json::array({"memcheck"}))
      in.fail("$.sanitizer_types", "\"sanitizer_types\": this service runs [\"memcheck\"] only");
  }
  options.sanitize = kind == TaskKind::sanitize ? exec::Sanitize::memcheck : exec::Sanitize::off;
  options.audit = kind == TaskKind::profile ? exec::Audit::ncu : exec::Audit::none;
}

exec::ReferenceTiming reference_timing(util::JsonReader& in, const Json& body) {
  const Json* mode = util::JsonReader::optional(body, "baseline_cache_mode");
  if (mode == nullptr || *mode == "bypass")
    return exec::ReferenceTiming::interleave;
  if (*mode == "reuse")
    return exec::ReferenceTiming::cached;
  in.fail("$.baseline_cache_mode",
          "\"baseline_cache_mode\" must be \"reuse\" (cached reference latency) or "
          "\"bypass\" (time the reference in this evaluation), got " +
              mode->dump());
  return exec::ReferenceTiming::interleave;
}

void read_arch(util::JsonReader& in, const Json& body, exec::EvalOptions& options) {
  const Json* arch = util::JsonReader::optional(body, "arch");
  const auto parsed =
      arch == nullptr
          ? compile::parse_arch("sm_90a")
          : (arch->is_string() ? compile::parse_arch(arch->get<std::string>()) : std::nullopt);
  if (!parsed) {
    in.fail("$.arch", "\"arch\" must be \"sm_90a\" or \"sm_100a\", got " + arch->dump());
    return;
  }
  options.arch = *parsed;
}

void read_options(util::JsonReader& in, const Json& body, TaskKind kind,
                  exec::EvalOptions& options) {
  read_arch(in, body, options);
  options.sets = bounded_int(in, body, "sets", 1, kMaxSets, options.sets);
  options.trials = bounded_int(in, body, "trials", 1, kMaxTrials, options.trials);
  options.warmup = bounded_int(in, body, "warmup", 0, kMaxWarmup, options.warmup);
  options.iterations = bounded_int(in, body, "iterations", 1, kMaxIterations, options.iterations);
  if (const Json* timeout = util::JsonReader::optional(body, "timeout")) {
    if (!timeout->is_number() || timeout->get<double>() <= 0 ||
        timeout->get<double>() > kMaxTimeoutS)
      in.fail("$.timeout", fmt::format("\"timeout\" must be a number of seconds in (0, {}], got {}",
                                       kMaxTimeoutS, timeout->dump()));
    else
      options.timeout =
          std::chrono::milliseconds(static_cast<long long>(timeout->get<double>() * 1000));
  }
  options.reference_timing = reference_timing(in, body);
  read_tool_fields(in, body, kind, options);
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
  PTXBENCH_TRY_ASSIGN(auto json, trace::parse_json_text(body, "request body"));
  util::JsonReader in("request body");
  if (!json.is_object()) {
    in.fail("$", "expected a JSON object, got " + std::string(json.type_name()));
    return in.finish(TaskRequest{});
  }
  only_keys(in, json, "$", kRequestKeys);
  const Json* solution = util::JsonReader::optional(json, "solution");
  if (in.ok() && (solution == nullptr || !solution->is_object()))
    in.fail(solution == nullptr ? "$" : "$.solution",
            "\"solution\" must be an object: {\"definition\": PROBLEM, \"sources\": "
            "[{\"path\": \"kernel.cu\", \"content\": SOURCE}]}");
  if (!in.ok())
    return in.finish(TaskRequest{});
  only_keys(in, *solution, "$.solution", kSolutionKeys);
  std::string source = single_source(in, *solution);
  const std::string definition = definition_of(in, *solution);
  if (!in.ok())
    return in.finish(TaskRequest{});
  PTXBENCH_TRY_ASSIGN(auto problem, suite.find(definition));
  const auto uuids = workload_uuids(in, json);
  if (!in.ok())
    return in.finish(TaskRequest{});
  PTXBENCH_TRY(check_workloads(uuids, *problem));
  TaskRequest request;
  request.kind = kind;
  request.problem = problem->name();
  request.source = std::move(source);
  request.solution_name = exec::solution_name(request.source, *problem);
  read_options(in, json, kind, request.options);
  if (!in.ok())
    return in.finish(TaskRequest{});
  request.canonical = canonical_json(request, json);
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
