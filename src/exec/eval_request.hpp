// The evaluation request: one problem, one candidate source in one language, and the options
// of its evaluation — the JSON body a client sends to `ptxbench serve` (POST /evaluate), the
// text the service's task store keeps, and what the fleet's broker queues (docs/service.md
// "Evaluation request").
//
// Problem. The remote executor writes requests, the HTTP service and the broker read them,
// and a store written by one release is read by the next; a body comes from anyone who can
// reach the service, so every field can be missing, of the wrong type or out of bounds.
//
// Approach. One encoder and one decoder, beside EvalOptions. The body is FlashInfer-Bench's
// (FIBServe clients keep working: a solution with one source file, the workload uuids, the
// timing counts, the baseline cache mode, the sanitizer types) plus four ptxbench members:
// `version` (absent: 1; a newer one than this build reads is refused by name), `language`
// (absent: triton for a `.py` source path, otherwise cuda), `audit` ("ncu") and `debug` (true:
// the cuda-gdb pass; absent: false, so a version-1 request without it means what it meant). The
// decoder checks the shape and the bounds, naming the JSON path of the first problem; what needs
// the suite (the problem exists, the workloads are its) is the reader's.
//
// Invariant: decode(encode(r)) == r for every request the decoder accepts, and encode writes
// every member (`debug` only when true: builds from before it, which refuse unknown members,
// still read every request that does not ask for the debugger), so a stored request means the
// same to a later build.
#pragma once

#include "exec/eval_options.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::exec {

// The request version this build writes and the newest it reads.
inline constexpr int kEvalRequestVersion = 1;

struct EvalRequest {
  std::string problem; // the definition's name
  std::string source;  // the candidate's one file, in options.language
  // The workloads asked for (FlashInfer-Bench's field); nullopt asks for the problem's own.
  std::optional<std::vector<std::string>> workload_uuids;
  // arch, language, sets, trials, warmup, iterations, timeout, reference timing, sanitize,
  // audit and debug travel; the rest are the evaluating host's own.
  EvalOptions options;
};

// The request body, every member written.
nlohmann::ordered_json to_json(const EvalRequest& request);

// `body` read; invalid_input naming `origin` and the JSON path ("request body: $.sets: ...").
util::Expected<EvalRequest> eval_request_from_json(const nlohmann::ordered_json& body,
                                                   const std::string& origin);

// Whether two requests ask for the same evaluation (the members that travel).
bool same_request(const EvalRequest& a, const EvalRequest& b);

} // namespace ptxbench::exec
