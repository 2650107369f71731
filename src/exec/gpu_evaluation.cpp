#include "exec/gpu_evaluation.hpp"

#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "exec/dynamic_report.hpp"
#include "exec/matched_ratio.hpp"
#include "sass/counters.hpp"
#include "suite/correctness.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <cuda_runtime.h>
#include <filesystem>
#include <fmt/format.h>
#include <future>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <utility>

namespace ptxbench::exec::detail {
namespace {

using Status = trace::EvaluationStatus;

// A tool pass that did not run, and why.
template <typename Pass> Pass not_run(const std::string& reason) {
  Pass pass;
  pass.reason = std::move(reason);
  return pass;
}

} // namespace

std::string warm_key(const suite::Problem& problem, std::uint64_t seed, int sets) {
  return fmt::format("{} | {} | {:016x} | {}", problem.name(), problem.workload.uuid, seed, sets);
}

GpuEvaluation::~GpuEvaluation() {
  if (m_child_holds_counter_session) { // an error path: the child ends here, so does its session
    m_child.reset();
    m_warm.spares.release_counter_session();
  }
  // Error paths (an exception from a CUDA check) end here; GPU memory goes under the lock.
  if (m_inputs || m_reference || m_stream) {
    std::shared_lock gpu(m_warm.lock);
    m_inputs.reset();
    m_reference.reset();
    m_stream.reset();
  }
}

std::uint64_t draw_secret() {
  std::random_device source;
  return (std::uint64_t{source()} << 32) ^ source();
}

util::Status GpuEvaluation::run(const CandidateRun& candidate) {
  m_run = &candidate;
  m_warm_up_folder = candidate.candidate->warm_up_cubins();
  const std::filesystem::path& candidate_binary = candidate.launch.paths.candidate_binary;
  const std::filesystem::path library = candidate.candidate->library();
  const suite::CorrectnessRule rule = suite::correctness_rule(m_problem);
  m_result.required_matched_ratio = rule.required_matched_ratio;
  m_result.atol = rule.atol;
  m_result.rtol = rule.rtol;
  // Until an evaluation has counted, a spare child prepared beside it opens no counter session
  // (spare_child.hpp "The counter session").
  RunningEvaluation running(m_warm.spares);
  m_running = &running;
  // Before the child starts: a child whose counts are reused never opens a counter session.
  look_up_counts(library);
  // The child starts (process, CUDA context) while the inputs are leased or made.
  auto inputs = std::async(std::launch::async, [&] { return prepare(); });
  const bool started = m_phases.time("child", [&] { return start_child(); });
  auto prepared = m_phases.time("inputs", [&] { return inputs.get(); });
  if (!prepared) {
    finish_child();
    m_running = nullptr;
    return prepared;
  }
  // Counting comes before timing so that the child's range-profiler session is closed before
  // any trial runs (spare_child.hpp "The counter session").
  (void)(started && m_phases.time("load", [&] { return load_child(library); }) &&
         m_phases.time("correctness", [&] { return correctness(); }) &&
         (!m_options.dynamic_counts || m_phases.time("counts", [&] { return counts(); })) &&
         m_phases.time("timing",
                       [&] {
                         const bool timed = timing();
                         running.done_timing(); // its window is closed: a spare may be prepared now
                         return timed;
                       }) &&
         m_phases.time("recheck", [&] { return recheck(); }));
  if (m_warm_up_folder && m_result.launches.cubin_functions)
    check_late_cubins();
  m_phases.time("finish", [&] { finish_child(); });
  tool_passes(candidate_binary, library);
  m_phases.time("release", [&] { release_warm_state(); });
  m_running = nullptr;
  return util::Ok{};
}

void GpuEvaluation::tool_passes(const std::filesystem::path& binary,
                                const std::filesystem::path& library) {
  const bool sanitize_wanted = m_options.sanitize == Sanitize::memcheck;
  const bool audit_wanted = m_options.audit == Audit::ncu;
  const bool debug_wanted = m_options.debug == Debug::cuda_gdb;
  if (!sanitize_wanted && !audit_wanted && !debug_wanted)
    return;
  // cuda-gdb would debug the Python interpreter that hosts a Triton child: the debugger pass
  // runs kernel.so files only. ncu audits both (audit()).
  const bool replayable = !m_run->own_child;
  if (!replayable && debug_wanted)
    m_result.debugger = not_run<DebuggerPass>(
        "not built for Triton candidates: the debugger pass runs kernel.so files only");
  if (!replayable && !sanitize_wanted && !audit_wanted)
    return;
  std::optional<util::Expected<SingleCallFiles>> files;
  {
    std::shared_lock gpu(m_warm.lock);
    files.emplace(SingleCallFiles::write(*m_buffers, library, m_result.check.signature,
                                         m_warm.device, m_run->binding));
  }
  if (!*files) {
    if (sanitize_wanted)
      m_result.sanitizer = not_run<SanitizerPass>(files->error().message);
    if (audit_wanted)
      m_result.ncu_audit = not_run<NcuAuditPass>(files->error().message);
    if (debug_wanted && replayable)
      m_result.debugger = not_run<DebuggerPass>(files->error().message);
    return;
  }
  if (sanitize_wanted)
    m_phases.time("sanitizer", [&] {
      std::shared_lock gpu(m_warm.lock);
      sanitize(binary, **files);
    });
  if (audit_wanted)
    m_phases.time("ncu_audit", [&] {
      // ncu needs the counters our own child may still hold while it ends in the background.
      const CounterSessionClaim counters(m_warm.spares, m_options.tool_timeout);
      std::unique_lock gpu(m_warm.lock); // hardware counters, like the counting pass
      audit(binary, **files);
    });
  if (debug_wanted && replayable)
    m_phases.time("debugger", [&] {
      std::shared_lock gpu(m_warm.lock);
      debug(binary, **files);
    });
}

void GpuEvaluation::sanitize(const std::filesystem::path& binary, const SingleCallFiles& files) {
  // A candidate that hangs or does not load would do the same under the sanitizer.
  if (m_result.status == Status::timeout || m_result.status == Status::compile_error) {
    m_result.sanitizer = not_run<SanitizerPass>(
        fmt::format("the main pass ended in {}", trace::to_string(m_result.status)));
    return;
  }
  // The single call runs in the candidate's own child: a Triton candidate's in the Python
  // child, with the evaluation's Triton cache (its kernels are compiled already; the
  // late-cubin check is done by now).
  const ChildCommand child = child_command(m_run->launch, files.argv(binary, {}));
  m_result.sanitizer = run_sanitizer_pass(m_tool_runner, child, m_options.tool_timeout);
  const SanitizerPass& pass = *m_result.sanitizer;
  if (!pass.ran || pass.finding.empty())
    return;
  // The paper's undefined behaviour (§A.2): a correct call whose only findings are
  // stream-ordered races stays correct, with its executed-instruction status unknown
  // (mark_undefined_behaviour) and the finding as a violation.
  if (measure::only_stream_ordered_races(pass.report) && m_result.status == Status::passed) {
    m_result.violations.push_back("undefined behaviour: " + pass.finding);
    return;
  }
  std::string message = pass.finding;
  if (m_result.status != Status::passed && !m_result.message.empty())
    message += " — without the sanitizer: " + m_result.message;
  fail(Status::runtime_error, std::move(message));
}

void GpuEvaluation::audit(const std::filesystem::path& binary, const SingleCallFiles& files) {
  // The audit reproduces the counts of a call that ran to the end; others have none to compare.
  if (m_result.status != Status::passed && m_result.status != Status::incorrect_numerical) {
    m_result.ncu_audit = not_run<NcuAuditPass>(
        fmt::format("the candidate ended in {}", trace::to_string(m_result.status)));
    return;
  }
  // The single call runs in the candidate's own child, as the sanitizer's does. ncu replays a
  // kernel.so's whole process once per counter pass (application replay, the paper's); a Triton
  // child's kernels are replayed in the process (kernel replay), since a re-run would import
  // torch and Triton again and run the candidate's autotuning again, which may choose another
  // configuration than the run before.
  const ChildCommand child = child_command(m_run->launch, files.argv(binary, audit_call_options()));
  const measure::NcuReplay replay =
      m_run->own_child ? measure::NcuReplay::kernel : measure::NcuReplay::application;
  m_result.ncu_audit = run_ncu_audit_pass(m_tool_runner, child, replay, m_options.tool_timeout,
                                          find_cuda_tool("ncu"));
  std::optional<protocol::Counts> in_process;
  if (m_result.dynamic && m_result.dynamic->raw) {
    auto counts = read_counts(*m_result.dynamic->raw);
    in_process =
        counts ? std::move(*counts) : protocol::Counts::unavailable(counts.error().message);
  }
  compare_counts(*m_result.ncu_audit, sass::counters_for(compile::to_string(m_result.check.arch)),
                 in_process);
}

void GpuEvaluation::debug(const std::filesystem::path& binary, const SingleCallFiles& files) {
  // A candidate that hangs or does not load would do the same under the debugger.
  if (m_result.status == Status::timeout || m_result.status == Status::compile_error) {
    m_result.debugger = not_run<DebuggerPass>(
        fmt::format("the main pass ended in {}", trace::to_string(m_result.status)));
    return;
  }
  // Evidence only: whatever cuda-gdb finds, the status stays the main pass's.
  const ChildCommand child = child_command(m_run->launch, files.argv(binary, {}));
  m_result.debugger =
      run_debugger_pass(m_tool_runner, child, m_options.tool_timeout, find_cuda_tool("cuda-gdb"));
  // cuda-gdb 13.0 on the H200 stops at device traps but lets an illegal address pass unnoticed
  // (bench/results/fleet_h200.md): a call that failed here and completed there was not
  // reproduced, which is not "no exception".
  DebuggerPass& pass = *m_result.debugger;
  if (pass.ran && pass.report.stop == measure::DebuggerStop::exited && pass.report.exit_code == 0 &&
      m_result.status == Status::runtime_error)
    pass.finding = "cuda-gdb did not reproduce the failure: the call completed under it (cuda-gdb "
                   "stops at traps and device asserts, not at every illegal memory access)";
}

std::string GpuEvaluation::warm_reference_key() const {
  return m_options.gqa_reference == reference::GqaBaseline::cudnn ? m_problem.name() + " | cuDNN"
                                                                  : m_problem.name();
}

// Runs on its own thread while the child starts; touches only the inputs' members and
// m_result's library and violations.
util::Status GpuEvaluation::prepare() {
  PTXBENCH_CUDA_CHECK(cudaSetDevice(m_warm.device)); // a thread of its own starts on device 0
  std::shared_lock gpu(m_warm.lock);
  PTXBENCH_TRY_ASSIGN(auto stream, cuda::create_stream());
  m_stream = std::move(stream);
  m_reference = m_warm.references.take(warm_reference_key());
  if (!m_reference) {
    m_reference = std::make_unique<WarmReference>();
    auto made = reference::make_library_reference(m_problem, m_options.gqa_reference);
    if (!made) {
      m_reference->fallback = made.error().message;
      made = reference::make_naive_reference(m_problem);
    }
    PTXBENCH_TRY(made);
    m_reference->reference = std::move(*made);
  }
  m_result.library = m_reference->reference->library();
  if (!m_reference->fallback.empty())
    m_result.violations.push_back("library baseline unavailable: " + m_reference->fallback);
  return lease_inputs(m_stream.get());
}

util::Status GpuEvaluation::lease_inputs(cudaStream_t stream) {
  // A secret seed drawn for this evaluation never comes again: only a caller-chosen seed is
  // worth keeping inputs for.
  if (m_options.seed) {
    m_inputs_key = warm_key(m_problem, m_result.seed, m_result.sets);
    m_inputs = m_warm.inputs.take(m_inputs_key);
  }
  // A lease is used only while its inputs still match the digest they were made with.
  if (m_inputs && m_inputs->buffers.input_checksum(stream) != m_inputs->digest)
    m_inputs.reset();
  const bool warm = m_inputs != nullptr;
  if (!m_inputs) {
    PTXBENCH_TRY_ASSIGN(auto buffers,
                        EvalBuffers::create(m_suite, m_problem, *m_reference->reference,
                                            m_result.sets, m_result.seed, stream));
    m_inputs = std::make_unique<WarmInputs>(WarmInputs{std::move(buffers), 0, 0});
    m_inputs->digest = m_inputs->buffers.input_checksum(stream);
    m_inputs->bytes = m_inputs->buffers.device_bytes();
  }
  m_buffers = &m_inputs->buffers;
  m_buffers->reseed_draws(m_secret);
  m_inputs_warm = warm;
  return util::Ok{};
}

void GpuEvaluation::release_warm_state() {
  std::shared_lock gpu(m_warm.lock);
  if (m_inputs && !m_inputs_modified && !m_inputs_key.empty()) {
    const std::size_t bytes = m_inputs->bytes;
    m_warm.inputs.give_back(m_inputs_key, std::move(m_inputs), bytes);
  }
  if (m_reference)
    m_warm.references.give_back(warm_reference_key(), std::move(m_reference), 1);
  m_inputs.reset();
  m_buffers = nullptr;
  m_stream.reset();
}

void GpuEvaluation::fail(Status status, std::string message) {
  m_result.status = status;
  m_result.message = std::move(message);
}

std::optional<protocol::Reply> GpuEvaluation::ask(const protocol::Request& request) {
  auto reply = m_child->request(request, m_options.timeout);
  if (reply && !reply->refused.empty())
    m_result.launches.refused = reply->refused;
  if (reply) {
    m_result.launches.modules.insert(m_result.launches.modules.end(), reply->modules.begin(),
                                     reply->modules.end());
    m_result.launches.stream_ordered_frees =
        std::max(m_result.launches.stream_ordered_frees, reply->stream_ordered_frees);
  }
  if (!reply) {
    const bool timeout = reply.error().kind == util::ErrorKind::timeout;
    fail(timeout ? Status::timeout : Status::runtime_error, reply.error().message);
    return std::nullopt;
  }
  if (!reply->ok) {
    const bool abi = reply->error == protocol::ChildError::signature_mismatch;
    std::string message = reply->message;
    if (!reply->cuda_error.empty())
      message += ": " + reply->cuda_error;
    fail(abi ? Status::compile_error : Status::runtime_error, std::move(message));
    return std::nullopt;
  }
  return std::move(*reply);
}

// Sends `prepare` to a started child (its context, under the shared lock); the reason it
// failed, or nullopt once the child is m_child.
std::optional<std::string> GpuEvaluation::prepare_child(StartedChild started) {
  m_child = std::move(started.process);
  m_log_path = std::move(started.log_path);
  m_result.child_reads_confined = m_child->reads_confined();
  if (started.startup) { // prepared in the background, beside evaluations or while idle
    m_result.child_startup = std::move(*started.startup);
    m_result.child_startup["prepared_ahead"] = true;
    m_child_holds_counter_session = started.holds_counter_session;
    return std::nullopt;
  }
  // The session's first pass costs what a count without it would: opening it here when it is
  // free costs nothing extra and spares the count the wait for the right.
  const bool claimed =
      m_options.dynamic_counts && !m_cached_counts && m_warm.spares.try_claim_counter_session();
  protocol::Request prepare;
  prepare.op = protocol::RequestOp::prepare;
  prepare.counter_session = claimed;
  std::shared_lock gpu(m_warm.lock);
  auto reply = m_child->request(prepare, m_options.timeout);
  if (reply && reply->ok) {
    if (reply->startup)
      m_result.child_startup = *reply->startup;
    m_child_holds_counter_session = claimed && reply->counter_session_open;
    if (claimed && !m_child_holds_counter_session)
      m_warm.spares.release_counter_session();
    return std::nullopt;
  }
  std::string why = reply ? reply->message : reply.error().message;
  m_child->stop();
  if (claimed)
    m_warm.spares.release_counter_session();
  m_result.child_log = m_child->log_tail(4096);
  m_child.reset();
  std::filesystem::remove(m_log_path);
  m_log_path.clear();
  return why;
}

bool GpuEvaluation::start_child() {
  // A spare that died while it waited (killed from outside) gets one replacement.
  std::string why;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto started = m_run->own_child ? m_warm.spares.start_own(m_run->launch) : m_warm.spares.take();
    if (!started) {
      why = started.error().message;
      break;
    }
    auto failed = prepare_child(std::move(*started));
    if (!failed)
      return true;
    why = *failed;
  }
  fail(Status::runtime_error, "the candidate process could not start: " + why);
  return false;
}

// A child that will count opens its range-profiler session before it loads the candidate: once
// loaded it runs under its system-call filter (child/system_call_filter.hpp), and opening a
// session removes a file (refused on the H200 as `unlink`). It waits for the right, outside
// the GPU lock; a child without a session leaves its count unknown (counts()).
void GpuEvaluation::open_counter_session() {
  if (!m_options.dynamic_counts || m_child_holds_counter_session ||
      !m_warm.spares.claim_counter_session(m_options.tool_timeout))
    return;
  protocol::Request prepare;
  prepare.op = protocol::RequestOp::prepare;
  prepare.counter_session = true;
  {
    std::shared_lock gpu(m_warm.lock);
    auto reply = m_child->request(prepare, m_options.timeout);
    m_child_holds_counter_session = reply && reply->ok && reply->counter_session_open;
  }
  if (!m_child_holds_counter_session)
    m_warm.spares.release_counter_session();
}

bool GpuEvaluation::load_child(const std::filesystem::path& library) {
  // Before a counter session opens and before any candidate code runs in the child.
  if (!preload_calibrations())
    return false;
  if (!m_cached_counts) // reused counts need no session
    open_counter_session();
  std::shared_lock gpu(m_warm.lock);
  protocol::Request load;
  load.op = protocol::RequestOp::load;
  load.library = library.string();
  load.signature = m_result.check.signature;
  stage(0); // a warm-up call (a Triton candidate's) runs in `load`
  load.sets = m_buffers->handles();
  load.scalars = m_buffers->scalar_bits();
  load.var_axes = m_buffers->var_axes();
  if (!hand_over_slot())
    return false;
  if (m_warm_up_folder)
    return load_with_warm_up(std::move(load));
  return ask(load).has_value();
}

// The call slot's descriptors go on the child's buffer socket before the load that names them.
// A descriptor the supervisor cannot export is a broken set-up; a child that cannot take it is
// gone, as a failed request would say.
bool GpuEvaluation::hand_over_slot() {
  auto descriptors = m_buffers->export_descriptors();
  if (!descriptors)
    throw util::Fatal("cannot export the call slot: " + descriptors.error().message);
  if (auto sent = m_child->send_descriptors(*descriptors); !sent) {
    fail(Status::runtime_error,
         "the candidate process did not take the call slot's buffers: " + sent.error().message);
    return false;
  }
  return true;
}

void GpuEvaluation::stage(int set) {
  if (auto staged = m_buffers->stage(set, m_stream.get()); !staged)
    throw util::Fatal("cannot stage input set " + std::to_string(set) + ": " +
                      staged.error().message);
  PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(m_stream.get()));
}

bool GpuEvaluation::inputs_unchanged(std::string_view when) {
  if (m_buffers->slot_inputs_intact(m_stream.get()))
    return true;
  m_inputs_modified = true;
  fail(Status::incorrect_numerical,
       fmt::format("the candidate modified its inputs ({}); inputs are read-only", when));
  m_result.violations.emplace_back("inputs modified");
  return false;
}

bool GpuEvaluation::outputs_match(int set, std::string_view when, bool listed) {
  // The fresh set's reference is computed the first time a draw is compared.
  if (set == m_buffers->fresh_set())
    if (auto computed = m_buffers->fresh_reference(*m_reference->reference, m_stream.get());
        !computed)
      throw util::Fatal("the reference on fresh inputs: " + computed.error().message);
  CompareStats stats;
  for (const CompareStats& output : m_buffers->compare(set, m_stream.get()))
    stats.merge(output);
  if (!m_result.correctness)
    m_result.correctness = CompareStats{};
  m_result.correctness->merge(stats);
  if (listed)
    m_result.comparisons.push_back(fmt::format("{} (input set {})", when, set));
  const SetJudgement judgement = judge_set(stats, m_result.required_matched_ratio);
  if (judgement.correct) {
    m_result.tolerated_failures += judgement.tolerated;
    return true;
  }
  std::string detail = fmt::format("{} of {} elements wrong", stats.failed, stats.elements);
  if (m_result.required_matched_ratio < 1.0)
    detail += fmt::format(" (matched ratio {:.7f}, the problem requires {:.7f})",
                          judgement.matched_ratio, m_result.required_matched_ratio);
  if (stats.candidate_nan > 0)
    detail += fmt::format(" ({} NaN: never written, or computed NaN)", stats.candidate_nan);
  fail(Status::incorrect_numerical, fmt::format("{} on input set {}: {}", when, set, detail));
  return false;
}

// One correctness call on `set`: sentinel, call, inputs unchanged, outputs compared; the
// child's trace of it goes into the launch evidence.
bool GpuEvaluation::correctness_call(int set, bool repeat) {
  m_buffers->fill_outputs_sentinel(m_stream.get());
  stage(set);
  protocol::Request call;
  call.op = protocol::RequestOp::call;
  call.set = 0; // the child's one set: the call slot
  auto reply = ask(call);
  if (!reply)
    return false;
  TracedCall traced{set, repeat, {}, reply->call_ms};
  for (const protocol::KernelSeen& k : reply->kernels)
    traced.launches.push_back(k.name);
  m_result.launches.correctness.push_back(std::move(traced));
  const std::string when = repeat ? fmt::format("repeated call on input set {} (the same inputs "
                                                "as the call before it)",
                                                set)
                                  : fmt::format("call on input set {}", set);
  if (!inputs_unchanged(when))
    return false;
  return outputs_match(set, repeat ? "repeated correctness call (the same inputs again)"
                                   : "correctness call");
}

// Every set once, then the last one again at once: a candidate that skips or replays work
// when it sees the same inputs twice shows it here (launch_rules.hpp). The calls after the
// first hold the GPU alone, as timed calls do: their latencies are what the launch rules hold
// the timed calls against, and a call sharing the GPU with another evaluation reads slower.
bool GpuEvaluation::correctness() {
  const int sets = m_buffers->set_count();
  {
    std::shared_lock gpu(m_warm.lock);
    if (!correctness_call(0, false))
      return false;
  }
  std::unique_lock gpu(m_warm.lock);
  for (int set = 1; set < sets; ++set)
    if (!correctness_call(set, false))
      return false;
  return correctness_call(sets - 1, true);
}

bool GpuEvaluation::recheck() {
  // The child's last word: a reply left on the channel after the last time request (when a
  // forged one was taken for it) answers the ping instead, with the wrong id.
  protocol::Request ping;
  ping.op = protocol::RequestOp::ping;
  if (!ask(ping))
    return false;
  std::shared_lock gpu(m_warm.lock);
  // The call slot still holds the last timed call's inputs and outputs.
  return inputs_unchanged("timed calls") &&
         outputs_match(m_buffers->staged_set(), "last timed call");
}

void GpuEvaluation::look_up_counts(const std::filesystem::path& library) {
  const auto refusal = counts_cache_refusal(m_options, !m_run->own_child);
  if (!refusal || !refusal->empty()) {
    m_counts_cache_note = refusal.value_or("");
    return;
  }
  auto bytes = util::read_file(library);
  if (!bytes) {
    m_counts_cache_note = "not used: " + bytes.error().message;
    return;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  CountsKey key = counts_key(m_run->source_sha256, util::sha256_hex(*bytes),
                             {m_problem.name(), m_problem.workload.uuid, m_result.seed,
                              m_result.sets, m_result.gpu, driver, m_options.arch});
  // An entry whose counts do not read as a child's reply does is no entry.
  if (auto cached = m_counts_cache.get(key); cached && read_counts(cached->counts))
    m_cached_counts = std::move(cached);
  else
    m_counts_cache_note =
        "no earlier count: counted here, stored if it reads and the outputs match";
  m_counts_key = std::move(key);
}

bool GpuEvaluation::reuse_counts() {
  m_result.dynamic = DynamicReport{};
  m_result.dynamic->raw = m_cached_counts->counts;
  m_result.dynamic->counts_cache = "reused: counted " + m_cached_counts->counted_at;
  // A spare prepared ahead may hold a session: it closes before any trial.
  if (!end_counter_session())
    return false;
  auto counts = read_counts(m_cached_counts->counts); // read once in look_up_counts
  if (counts && counts->available)
    record_counted_kernels(counts->kernels());
  return true;
}

void GpuEvaluation::store_counts(const trace::Json& counts) {
  m_counts_cache.put(*m_counts_key, counts, m_result.timestamp);
  m_counts_cache_note = "stored";
}

bool GpuEvaluation::counts() {
  if (m_cached_counts)
    return reuse_counts();
  // Only a child that opened its range-profiler session before loading counts (its filter
  // refuses what opening one needs). It has closed its session when the count returns, and the
  // right goes back — or, if the count broke the child, when the child has ended.
  m_result.dynamic = DynamicReport{};
  m_result.dynamic->counts_cache = m_counts_cache_note;
  if (!m_child_holds_counter_session) {
    m_result.dynamic->reason =
        "no counter session: the GPU's range profiler was not free before the candidate loaded";
    return true;
  }
  std::optional<protocol::Reply> reply;
  {
    std::unique_lock gpu(m_warm.lock);
    stage(0);
    protocol::Request count;
    count.op = protocol::RequestOp::count;
    count.set = 0;
    reply = ask(count);
  }
  if (!reply) {
    // A count pass that breaks the candidate is a runtime error like any other call.
    m_result.dynamic->reason = "the counting pass failed";
    return false;
  }
  m_warm.spares.release_counter_session();
  m_child_holds_counter_session = false;
  if (!reply->counts)
    return true; // a reply without counts: unknown, and no call
  // The report keeps the counts as the child sent them (decoded: protocol/counts.hpp).
  m_result.dynamic->raw = protocol::to_json(*reply->counts);
  if (!reply->counts->available)
    return true; // no count, so no call
  record_counted_kernels(reply->counts->kernels());
  // The counting pass called the candidate again on input set 0 (once per hardware pass), its
  // outputs reset before each: what it left must still be right.
  std::shared_lock gpu(m_warm.lock);
  const bool right = outputs_match(0, "counting-pass call (again, after the correctness calls)");
  if (right && m_counts_key) {
    store_counts(*m_result.dynamic->raw);
    m_result.dynamic->counts_cache = m_counts_cache_note;
  }
  return right;
}

void GpuEvaluation::record_counted_kernels(const std::vector<std::string>& names) {
  LaunchEvidence& launches = m_result.launches;
  launches.counted_launches = names.size();
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string kernel = range_kernel(names[i], i, reference_launches(launches));
    if (!kernel.empty())
      launches.counted.push_back(kernel);
  }
}

bool GpuEvaluation::end_counter_session() {
  if (!m_child_holds_counter_session)
    return true;
  std::shared_lock gpu(m_warm.lock);
  protocol::Request end;
  end.op = protocol::RequestOp::end_session;
  if (!ask(end))
    return false; // the child is broken; its session ends with it
  m_child_holds_counter_session = false;
  m_warm.spares.release_counter_session();
  return true;
}

void GpuEvaluation::finish_child() {
  if (m_child) {
    // The child's exit and its context's teardown happen in the background, under the GPU
    // lock held shared (spare_child.hpp).
    m_result.child_log = m_child->log_tail(std::size_t{64} * 1024);
    m_warm.spares.retire(StartedChild{std::move(*m_child), std::move(m_log_path), std::nullopt,
                                      std::exchange(m_child_holds_counter_session, false)});
    m_child.reset();
  }
  if (!m_log_path.empty())
    std::filesystem::remove(m_log_path);
  m_log_path.clear();
}

} // namespace ptxbench::exec::detail
