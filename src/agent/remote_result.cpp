// The two JSON shapes the remote executor shares with `ptxbench serve`: the evaluation request
// it sends (exec/eval_request.hpp) and the `ptxbench eval --json` result it reads back
// (docs/service.md). The result's Evaluation is decoded by exec (evaluation_json.cpp), beside its
// encoder; what is left here is the client's own part: the shape it insists on, the service's
// build, the local check report.
#include "agent/remote_executor.hpp"
#include "exec/eval_request.hpp"
#include "exec/evaluation.hpp"
#include "trace/json_io.hpp"

namespace ptxbench::agent {
namespace {

using Json = nlohmann::ordered_json;

util::Error bad_result(const std::string& what) {
  return util::make_error(util::ErrorKind::bad_response,
                          "the evaluation service's result is not `ptxbench eval --json` output: " +
                              what);
}

} // namespace

Json evaluate_request(const std::string& source, const suite::Problem& problem,
                      const exec::EvalOptions& options) {
  return exec::to_json(exec::EvalRequest{problem.name(), source, std::nullopt, options});
}

util::Expected<RemoteResult> read_result(const Json& result, const std::string& needs_gpu,
                                         exec::CheckReport check) {
  if (!result.is_object() || !result.contains("trace") || !result.contains("check") ||
      !result["check"].is_object())
    return bad_result("expected an object with \"status\", \"check\" and \"trace\"");
  if (result["check"].value("outcome", "") != exec::to_string(exec::CheckOutcome::ok))
    return bad_result("the service's build of the kernel failed where the local one succeeded");
  const std::string origin = "evaluation service result";
  auto trace = trace::trace_from_json(result["trace"], origin);
  if (!trace)
    return bad_result(trace.error().message);
  auto ev = exec::evaluation_from_trace(*trace, origin);
  if (!ev)
    return bad_result(ev.error().message);
  ev->check = std::move(check);
  if (ev->needs_gpu.empty())
    ev->needs_gpu = needs_gpu;
  return RemoteResult{std::move(*ev), std::move(*trace)};
}

} // namespace ptxbench::agent
