#include "service/task.hpp"

#include "exec/eval_request.hpp"
#include "exec/evaluation.hpp"
#include "trace/json_io.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fmt/format.h>

namespace ptxbench::service {
namespace {

// The endpoint decides the tool (/sanitize adds memcheck, /profile the ncu audit, /debug
// cuda-gdb); a body asking for a tool another endpoint runs is refused by name.
void check_tools(util::JsonReader& in, const Json& body, TaskKind kind) {
  const Json* types = util::JsonReader::optional(body, "sanitizer_types");
  if (kind != TaskKind::sanitize && types != nullptr && !(types->is_array() && types->empty()))
    in.fail("$.sanitizer_types", "\"sanitizer_types\" belongs to POST /sanitize");
  const Json* audit = util::JsonReader::optional(body, "audit");
  if (kind != TaskKind::profile && audit != nullptr && *audit != "none")
    in.fail("$.audit", "\"audit\" belongs to POST /profile");
  const Json* debug = util::JsonReader::optional(body, "debug");
  if (kind != TaskKind::debug && debug != nullptr && *debug != false)
    in.fail("$.debug", "\"debug\" belongs to POST /debug");
}

util::Status check_workloads(const std::optional<std::vector<std::string>>& uuids,
                             const suite::Problem& problem) {
  if (!uuids || std::find(uuids->begin(), uuids->end(), problem.workload.uuid) != uuids->end())
    return util::Ok{};
  return util::make_error(util::ErrorKind::not_found,
                          fmt::format("No workloads found for definition: {} (its workload is {})",
                                      problem.name(), problem.workload.uuid));
}

} // namespace

TaskKind kind_of(const exec::EvalOptions& options) {
  if (options.sanitize == exec::Sanitize::memcheck)
    return TaskKind::sanitize;
  if (options.debug == exec::Debug::cuda_gdb)
    return TaskKind::debug;
  return options.audit == exec::Audit::ncu ? TaskKind::profile : TaskKind::evaluate;
}

util::Expected<TaskRequest> parse_task_request(std::string_view body, TaskKind kind,
                                               const suite::Suite& suite) {
  PTXBENCH_TRY_ASSIGN(auto json, trace::parse_json_text(body, "request body"));
  util::JsonReader in("request body");
  if (json.is_object())
    check_tools(in, json, kind);
  if (!in.ok())
    return in.finish(TaskRequest{});
  PTXBENCH_TRY_ASSIGN(auto eval, exec::eval_request_from_json(json, "request body"));
  eval.options.sanitize =
      kind == TaskKind::sanitize ? exec::Sanitize::memcheck : exec::Sanitize::off;
  eval.options.audit = kind == TaskKind::profile ? exec::Audit::ncu : exec::Audit::none;
  eval.options.debug = kind == TaskKind::debug ? exec::Debug::cuda_gdb : exec::Debug::off;
  PTXBENCH_TRY_ASSIGN(auto problem, suite.find(eval.problem));
  PTXBENCH_TRY(check_workloads(eval.workload_uuids, *problem));
  TaskRequest request;
  request.kind = kind;
  request.problem = problem->name();
  request.source = eval.source;
  request.solution_name = exec::solution_name(request.source, *problem, eval.options.language);
  request.options = eval.options;
  request.canonical = exec::to_json(eval);
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
  return util::random_hex_128();
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
