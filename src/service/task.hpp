// Tasks of the evaluation service (docs/service.md): what a client submits — a candidate
// source for one problem, the arch and the evaluation options — and what the service keeps
// about it while it waits, runs and after it has finished.
//
// Request bodies are untrusted: parse_task_request() checks every field (unknown keys are
// errors, numbers have bounds, the problem must exist) and says what is wrong in one sentence
// that the HTTP layer returns as the 400 or 404 body.
#pragma once

#include "compile/nvcc.hpp"
#include "exec/evaluator.hpp"
#include "suite/suite.hpp"
#include "util/enum_table.hpp"
#include "util/error.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::service {

using Json = nlohmann::ordered_json;

// Which endpoint a task came from: a plain evaluation, one with the compute-sanitizer
// memcheck pass, one with the ncu source-counter audit, or one with the cuda-gdb pass.
// Persisted; explicit values.
enum class TaskKind : std::uint8_t { evaluate = 1, sanitize = 2, profile = 3, debug = 4 };

// Persisted; explicit values. `completed` means the evaluation ran to a verdict (look at the
// result's status); `failed` means no verdict exists (a broken set-up, an internal error).
enum class TaskState : std::uint8_t { queued = 1, running = 2, completed = 3, failed = 4 };

struct TaskKindInfo {
  TaskKind kind;
  std::string_view name;
};
struct TaskStateInfo {
  TaskState state;
  std::string_view name;
};

inline constexpr std::array kTaskKinds{
    TaskKindInfo{TaskKind::evaluate, "evaluate"}, TaskKindInfo{TaskKind::sanitize, "sanitize"},
    TaskKindInfo{TaskKind::profile, "profile"}, TaskKindInfo{TaskKind::debug, "debug"}};
inline constexpr std::array kTaskStates{
    TaskStateInfo{TaskState::queued, "queued"}, TaskStateInfo{TaskState::running, "running"},
    TaskStateInfo{TaskState::completed, "completed"}, TaskStateInfo{TaskState::failed, "failed"}};

consteval bool task_tables_complete() {
  for (std::size_t i = 0; i < kTaskKinds.size(); ++i)
    if (static_cast<std::size_t>(kTaskKinds[i].kind) != i + 1)
      return false;
  for (std::size_t i = 0; i < kTaskStates.size(); ++i)
    if (static_cast<std::size_t>(kTaskStates[i].state) != i + 1)
      return false;
  return true;
}
static_assert(task_tables_complete(), "kTaskKinds and kTaskStates must list every value in order");
static_assert(util::no_enumerator_after<TaskKind, kTaskKinds.size()>(),
              "kTaskKinds lacks a row for an enumerator after its last");

constexpr std::string_view to_string(TaskKind kind) {
  return kTaskKinds[static_cast<std::size_t>(kind) - 1].name;
}
constexpr std::string_view to_string(TaskState state) {
  return kTaskStates[static_cast<std::size_t>(state) - 1].name;
}

// A checked request: everything the worker needs, and the canonical JSON it was read from
// (what the task store keeps, so a restarted server re-reads it with the same rules).
struct TaskRequest {
  TaskKind kind = TaskKind::evaluate;
  std::string problem;
  std::string source;
  std::string solution_name; // "<problem>_<sha1[:8]>", FIB's normalized_solution_name
  exec::EvalOptions options;
  Json canonical;
  // The client's fairness unit in a fleet (the X-Ptxbench-Run header); empty: the service's
  // default. This host's own queue is one FIFO and ignores it.
  std::string run;
};

// The endpoint whose tool `options` asks for: memcheck is /sanitize, the cuda-gdb pass /debug,
// the ncu audit /profile (in that order, where a fleet request asks for more than one).
TaskKind kind_of(const exec::EvalOptions& options);

// Reads a POST /evaluate, /sanitize, /profile or /debug body (exec/eval_request.hpp) and checks it
// against the suite and the endpoint. invalid_input for a body that is not a
// JSON object of the documented shape, naming the JSON path ("request body:
// $.solution.sources[0].content: expected a string, got integer"); not_found for an unknown
// problem.
util::Expected<TaskRequest> parse_task_request(std::string_view body, TaskKind kind,
                                               const suite::Suite& suite);

// A task as the service keeps it (the request itself stays in the task store). Times are
// ISO-8601 UTC; empty when not reached yet.
struct Task {
  std::string id; // 32 lower-case hex digits
  TaskKind kind = TaskKind::evaluate;
  std::string problem;
  std::string solution_name;
  compile::Arch arch = compile::Arch::sm_90a;
  TaskState state = TaskState::queued;
  std::optional<Json> result; // completed: the JSON `ptxbench eval --json` prints
  std::string needs_gpu;      // completed without the GPU step: what could not run and why
  std::string error;          // failed: why no verdict exists
  std::string device;         // the worker that ran it ("cuda:0", or "cpu" without a GPU)
  int attempts = 0;           // times a worker started it (a restart re-queues a running task)
  std::string submitted_at;
  std::string started_at;
  std::string finished_at;
};

// A queued task for `request`, submitted now under a fresh id.
Task new_task(const TaskRequest& request);

// The task response of GET /tasks/{id} (null members left out, as FIBServe does).
Json task_json(const Task& task);

// Compact JSON text; invalid UTF-8 (a candidate's log can hold any bytes) becomes U+FFFD.
std::string dump_json(const Json& json);

// A fresh task id (32 hex digits from the OS random source).
std::string new_task_id();
// Whether `id` has the shape of a task id (anything else is an unknown task).
bool is_task_id(std::string_view id);

// `at` as "2026-11-30T05:30:00.123Z" (fixed width: such texts sort as their times do).
std::string utc_text(std::chrono::system_clock::time_point at);
// utc_text of now.
std::string utc_now();

} // namespace ptxbench::service
