// The GPU step on an evaluation service (`ptxbench serve`, docs/service.md) instead of a local
// GPU: `ptxbench run --eval-service URL[,URL]`.
//
// Problem. The machine that runs the agent loop may have no GPU, or one GPU for many runs;
// a pool of GPU hosts serves evaluations to all of them. A turn must come out exactly as it
// would with a local GPU, and a service that is down, overloaded or slow must cost the run an
// infra turn (retried, never counted against the model), not a wrong verdict.
//
// Approach. The static check runs here, check_before_gpu() as in GpuExecutor, so compile errors
// never travel. A kernel that builds goes to the service whose GET /health reports the shortest
// queue (the first of equals), as POST /evaluate with this run's evaluation options; its task is
// then long-polled (GET /tasks/{id}?timeout=) until it has finished. The answer is the JSON
// `ptxbench eval --json` prints: its GPU part is read back into an exec::Evaluation (the check
// part is the local report) and turned into the turn by evaluation_turn(), GpuExecutor's own
// conversion; the trace stored is the service's.
//
// Failures — no service reachable, a status other than 200, a body that is not the documented
// shape, a failed task, no answer within max_wait — are errors: the loop makes an infra turn.
#pragma once

#include "agent/executor.hpp"
#include "model/http_transport.hpp"
#include "model/secret.hpp"

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ptxbench::agent {

struct RemoteOptions {
  std::vector<std::string> urls; // base URLs ("http://gpu-host:8000")
  exec::EvalOptions eval;        // sent with every task (the language too); the arch is the turn's
  model::Secret token;           // bearer token, or empty
  std::chrono::seconds poll{30}; // the wait of one long-poll request
  std::chrono::milliseconds max_wait{std::chrono::hours(2)};           // submit to finished
  std::chrono::milliseconds request_timeout{std::chrono::seconds(30)}; // health, submit
};

// A task as GET /tasks/{id} answers it (docs/service.md); `result` is null until completed.
struct TaskAnswer {
  std::string status;    // "queued", "running", "completed" or "failed"
  std::string error;     // why a failed task failed
  std::string needs_gpu; // the task's note when the GPU step did not run
  nlohmann::ordered_json result;
};

// `task` read; a missing status or a field of the wrong type is a bad_response naming `origin`
// and the JSON path ("task 3f…: $.error: expected a string, got integer").
util::Expected<TaskAnswer> read_task_answer(const nlohmann::ordered_json& task,
                                            const std::string& origin);

// Thread-safe: each turn is its own sequence of HTTP requests.
class RemoteExecutor final : public Executor {
public:
  RemoteExecutor(const exec::Checker& checker, model::HttpTransport& transport,
                 RemoteOptions options);
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override;
  std::string_view name() const override { return "remote"; }

private:
  using Json = nlohmann::ordered_json;
  util::Expected<std::string> pick_service();
  util::Expected<std::string> submit(const std::string& url, const std::string& source,
                                     const suite::Problem& problem, compile::Arch arch);
  util::Expected<TaskAnswer> wait(const std::string& url, const std::string& task_id);
  util::Expected<Json> exchange(model::HttpMethod method, const std::string& url, std::string body,
                                std::chrono::milliseconds timeout);

  const exec::Checker& m_checker;
  model::HttpTransport& m_transport;
  RemoteOptions m_options;
};

// invalid_input unless every URL is http:// or https:// with a host.
util::Status check_service_urls(const std::vector<std::string>& urls);

// The body of POST /evaluate for `source` with `options` (docs/service.md).
nlohmann::ordered_json evaluate_request(const std::string& source, const suite::Problem& problem,
                                        const exec::EvalOptions& options);

struct RemoteResult {
  exec::Evaluation evaluation;
  trace::Trace trace;
};

// A service's answer — `result` is what `ptxbench eval --json` prints, `needs_gpu` the task's
// note when the GPU step did not run — as its trace and an exec::Evaluation of the GPU part
// whose check part is `check`. bad_response when `result` is not that shape.
util::Expected<RemoteResult> read_result(const nlohmann::ordered_json& result,
                                         const std::string& needs_gpu, exec::CheckReport check);

} // namespace ptxbench::agent
