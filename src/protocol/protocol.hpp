// The supervisor ↔ candidate-child protocol (docs/evaluation.md "Processes").
//
// Problem. The candidate's code runs in a child process so that a crash, a trap, a sticky CUDA
// error or a hang dies with the child; the supervisor still has to drive it (load the binary,
// call it on a given input set, time it, count its instructions) and read the answers.
//
// Approach. One JSON object per line in each direction, over a dedicated pipe pair whose fds
// are passed on the command line (never stdin/stdout: whatever the candidate prints goes to a
// log file, so printing cannot forge a reply). The supervisor sends one request and waits for
// exactly one reply under a deadline; it never pipelines. Requests:
//   prepare {counter_session}    initialise the driver, CUPTI and the range profiler, create
//                                the context, stream and L2 scratch and, when asked, open the
//                                range profiler's session ahead of `count` (one process per
//                                GPU may hold one: the supervisor hands out that right); the
//                                reply carries the start-up steps' wall times (`startup`) and
//                                whether the session is open (`counter_session_open`)
//   load  {library, signature, sets:[[{ipc, bytes, output}...]...], scalars, var_axes,
//          binding?}              a Triton candidate's load also carries `binding` (how a call
//                                maps to `run`'s parameters, frontend/triton/binding.hpp) and runs
//                                one warm-up call on set 0 (JIT, autotuning); its reply carries
//                                that call's wall time (`jit_ms`)
//   call  {set}                  one call on input set `set`, then a device synchronise
//   time  {warmup, iterations, first_call, mode}  one measure::run_trial, rotating the sets
//                                from call `first_call` on (a trial timed in chunks keeps
//                                its rotation); mode is batched or strict; the reply says
//                                which mode timed it
//   count {set}                  dynamic instruction counts of one call (separate pass), as
//                                metric → value per range (protocol/counts.hpp); a session
//                                opened at `prepare` is closed after it
//   end_session {}               close the range profiler's session opened at `prepare`
//   ping  {}                     answered at once: sent after the last timed request, so a
//                                real reply left behind by a forged one is found
//   exit  {}
// Every request carries a random 64-bit `id` that its reply carries back (child_process.hpp
// rejects a reply with another id, and any line no request asked for).
// The child does nothing with CUDA before its first request: a spare child can be started
// while another evaluation is being timed; everything CUDA waits for `prepare`.
// Replies carry ok, an error kind and message, the ptxbench_invoke status and the CUDA error
// text, the driver entry points refused so far, plus the op's data: `call` its latency and
// kernels, `time` its latencies and the kernels of every timed call. Numbers that are not
// finite travel as the strings "NaN", "Infinity", "-Infinity" (util/json_number.hpp, exact
// spellings only: JSON has no such numbers, and a NaN dumped by the JSON library would arrive
// as null). Decoding is strict: a reply that is not this shape is bad_response, which the
// supervisor treats as a misbehaving candidate; decoding never throws.
//
// Invariants. Replies are advisory for speed only: correctness is always decided by the
// supervisor from the buffers it owns. Scalars travel as the 64 raw bits of PtxbenchScalar.
#pragma once

#include "measure/timing.hpp"
#include "protocol/counts.hpp"
#include "trace/schema.hpp"
#include "util/enum_table.hpp"
#include "util/error.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::protocol {

// Persisted on the wire: explicit values.
enum class RequestOp : std::uint8_t {
  load = 1,
  call = 2,
  time = 3,
  count = 4,
  exit = 5,
  prepare = 6,
  end_session = 7,
  ping = 8 // answered at once: the supervisor's last word to a child it keeps using no more
};

// Why a request failed in the child; persisted on the wire.
enum class ChildError : std::uint8_t {
  none = 1,
  signature_mismatch = 2, // kernel.so was built for another signature
  dlopen = 3,             // the library or a symbol could not be loaded
  ipc = 4,                // an IPC handle could not be opened
  invoke = 5,             // ptxbench_invoke returned an error status
  cuda = 6,               // a CUDA error after the call (often sticky)
  timer = 7,              // the timer or profiler failed
  protocol = 8,           // the request made no sense
};

struct ChildErrorInfo {
  ChildError error;
  std::string_view name;
};

inline constexpr std::array kChildErrors{
    ChildErrorInfo{ChildError::none, "none"},
    ChildErrorInfo{ChildError::signature_mismatch, "signature_mismatch"},
    ChildErrorInfo{ChildError::dlopen, "dlopen"},
    ChildErrorInfo{ChildError::ipc, "ipc"},
    ChildErrorInfo{ChildError::invoke, "invoke"},
    ChildErrorInfo{ChildError::cuda, "cuda"},
    ChildErrorInfo{ChildError::timer, "timer"},
    ChildErrorInfo{ChildError::protocol, "protocol"},
};

consteval bool child_errors_complete() {
  for (std::size_t i = 0; i < kChildErrors.size(); ++i)
    if (static_cast<std::size_t>(kChildErrors[i].error) != i + 1)
      return false;
  return true;
}
static_assert(child_errors_complete(), "kChildErrors must list every ChildError in value order");
static_assert(util::no_enumerator_after<ChildError, kChildErrors.size()>(),
              "kChildErrors lacks a row for an enumerator after its last");

std::string_view to_string(RequestOp op);
std::string_view to_string(ChildError error);

// One buffer of the call slot (protocol/device_buffer.hpp): either a CUDA IPC handle, or —
// with `span` > 0 — the next of the descriptors the supervisor sent on the child's buffer socket
// before this request, an allocation of `span` bytes of which the tensor uses the first `bytes`.
struct BufferHandle {
  std::string ipc; // hex cudaIpcMemHandle_t; empty when shared by descriptor
  std::uint64_t bytes = 0;
  bool output = false;
  std::uint64_t span = 0;
};

// One input set: tensor inputs then outputs, in ABI order.
using SetHandles = std::vector<BufferHandle>;

struct Request {
  RequestOp op = RequestOp::exit;
  // Drawn at random by the supervisor for every request; the reply must carry it back, so a
  // line written into the reply pipe by anything but the server answers no request.
  std::uint64_t id = 0;
  // load
  std::string library;
  std::string signature;
  std::vector<SetHandles> sets;
  std::vector<std::uint64_t> scalars; // PtxbenchScalar bits
  std::vector<std::int64_t> var_axes;
  std::string binding; // a Triton candidate's binding JSON; empty for a kernel.so
  // call, count
  int set = 0;
  // time
  int warmup = 10;
  int iterations = 50;
  int first_call = 0; // the rotation's position: call i uses set (first_call + i) % sets
  measure::TimingMode mode = measure::TimingMode::batched;
  // the same trial with the child's own one-block kernel instead of the candidate's call: the
  // per-call overhead of the strict protocol, which the supervisor measures around it; also
  // answered before `load` (no outputs to reset), for the calibration's cap
  bool calibrate = false;
  // prepare
  bool counter_session = false;
};

struct KernelSeen {
  std::string name;
  std::uint32_t stream_id = 0;
  double duration_ms = 0.0;
  std::string launch; // measure::GpuActivity::launch; empty when not recorded
};

// A module (cubin) loaded in the child, as its CUPTI module-load callback saw it
// (measure::LoadedModule): which module's kernel ran cannot be told by name alone.
struct ModuleSeen {
  std::string sha256;                 // of the cubin image
  std::vector<std::string> functions; // its function symbols
};

// The kernels a call launched (names, sorted) and how many timed calls of a trial launched
// exactly those.
struct KernelSet {
  std::vector<std::string> kernels;
  int calls = 0;
};

struct Reply {
  std::uint64_t id = 0; // the request's id, echoed by the server
  bool ok = true;
  ChildError error = ChildError::none;
  std::string message;
  int invoke_status = 0;
  std::string cuda_error;
  // time
  std::vector<double> latencies_ms;
  std::vector<double> event_ms;
  bool late_work = false;
  int last_set = -1;
  std::vector<KernelSeen> kernels;    // time: of the last timed call; call: of the call
  std::vector<KernelSet> kernel_sets; // time: every timed call's kernels, grouped
  measure::TimingMode mode = measure::TimingMode::strict; // the mode that timed the trial
  std::string strict_reason; // why a batched request was timed strictly
  // call: the call's CUPTI latency (last end − first start of its GPU work), when traced
  std::optional<double> call_ms;
  // every reply: the driver entry points the process refused to hand out so far
  // (entry_point_guard.hpp)
  std::vector<std::string> refused;
  // every reply once the child traces: the modules loaded in it since its last reply, in load
  // order
  std::vector<ModuleSeen> modules;
  // every reply once the child traces: the stream-ordered frees (cudaFreeAsync) made in it so
  // far, a running total
  std::uint64_t stream_ordered_frees = 0;
  // count: metric → value per range, or why there is none (protocol/counts.hpp)
  std::optional<Counts> counts;
  // prepare: wall time of each start-up step in ms ({"cuda_driver": …, "context": …})
  std::optional<trace::Json> startup;
  bool counter_session_open = false;
  // load of a Triton candidate: the warm-up call's wall time (JIT compilation, autotuning)
  std::optional<double> jit_ms;

  static Reply failure(ChildError error, std::string message);
};

// One line each, without the newline.
std::string encode(const Request& request);
std::string encode(const Reply& reply);
util::Expected<Request> decode_request(std::string_view line);
util::Expected<Reply> decode_reply(std::string_view line);

} // namespace ptxbench::protocol
