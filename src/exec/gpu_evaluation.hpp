// The GPU phases of one evaluation (evaluator.hpp has the flow and its invariants): inputs and
// references (leased warm, or made) while the candidate child starts, correctness,
// interleaved timing, the re-check of the last timed output, the dynamic-count pass and, on
// request, the sanitizer, ncu-audit and debugger passes (tool_passes.hpp). Each GPU phase holds the
// Evaluator's GPU lock as evaluator.hpp says. Internal to exec/.
#pragma once

#include "cuda/owned.hpp"
#include "exec/buffers.hpp"
#include "exec/child_command.hpp"
#include "exec/child_process.hpp"
#include "exec/counts_cache.hpp"
#include "exec/eval_options.hpp"
#include "exec/evaluation.hpp"
#include "exec/tool_passes.hpp"
#include "exec/trial_pairs.hpp"
#include "exec/warm_state.hpp"
#include "measure/timing.hpp"
#include "reference/reference.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

namespace ptxbench::exec::detail {

// 64 bits from the OS's random source: an evaluation's protocol secret.
std::uint64_t draw_secret();

// How long the reference keeps the GPU busy before the first trial (gpu_timing.cpp).
inline constexpr std::chrono::milliseconds kPreheat{120};
// A pair of trials whose reference/candidate ratio strays more than this from the median
// ratio of the evaluation's pairs is timed again, at most kMaxRetimedPairs times (gpu_timing.cpp).
inline constexpr double kPairOutlier = 0.015;
inline constexpr int kMaxRetimedPairs = 2;
// The violation a call's unexplained wall time records (gpu_timing.cpp); a launch rule broken
// in the same calls decides the status instead (evaluator.cpp): foreign work explains the time.
inline constexpr std::string_view kUnexplainedWallTime = "unexplained wall time";
// The violation of a latency below the GPU's speed of light (gpu_timing.cpp
// within_speed_of_light); a broken launch rule decides it the same way.
inline constexpr std::string_view kFasterThanThePeak = "faster than the GPU's tensor peak";
// One side's calls of a trial, gathered over its chunks.
// The candidate under evaluation as the GPU phases need it: the checked candidate (frontend/
// candidate.hpp), the launch of its child, whether that child is its own (a language that does
// not run in ptxbench-candidate: no spare serves it, no ncu audit replays it), the binding of
// `run`'s parameters for the `load` request and the disassembler of the cubins a warm-up builds.
struct CandidateRun {
  const frontend::Candidate* candidate = nullptr;
  ChildLaunch launch; // launch.candidate is `candidate`
  bool own_child = false;
  std::string binding;
  const sass::Disassembler* disassembler = nullptr;
  std::string source_sha256; // of the candidate's source text (the counts cache's key)
};

struct TrialSamples {
  std::vector<double> latencies_ms; // CUPTI, one per timed call
  std::vector<double> event_ms;     // CUDA events, one per timed call
  int calls = 0;                    // calls made, warm-ups included: the input-set rotation
};

class GpuEvaluation {
public:
  GpuEvaluation(Evaluation& result, const suite::Suite& suite, const suite::Problem& problem,
                const EvalOptions& options, ReferenceLatencyCache& cache, CountsCache& counts_cache,
                WarmState& warm, util::PhaseLog& phases, util::ProcessRunner& tool_runner)
      : m_result(result), m_suite(suite), m_problem(problem), m_options(options), m_cache(cache),
        m_counts_cache(counts_cache), m_warm(warm), m_phases(phases), m_tool_runner(tool_runner) {}
  ~GpuEvaluation();
  GpuEvaluation(const GpuEvaluation&) = delete;
  GpuEvaluation& operator=(const GpuEvaluation&) = delete;

  // Fills m_result; errors only for a broken set-up (no reference, out of memory).
  util::Status run(const CandidateRun& candidate);

private:
  util::Status prepare();
  // The warm library reference's key: the problem, and for GQA the baseline asked for.
  std::string warm_reference_key() const;
  util::Status lease_inputs(cudaStream_t stream);
  bool start_child();
  std::optional<std::string> prepare_child(StartedChild started);
  void open_counter_session();
  bool load_child(const std::filesystem::path& library);
  bool hand_over_slot();
  bool load_with_warm_up(protocol::Request load);
  void scan_warm_up_cubins();
  void check_late_cubins();
  bool correctness();
  bool correctness_call(int set, bool repeat);
  void record_counted_kernels(const std::vector<std::string>& names);
  bool timing();
  // One timing phase: every trial pair, the outliers timed again, the latencies; false when
  // the candidate failed in it (status set).
  bool timing_phase();
  measure::L2Flusher& flusher();
  void preheat();
  // Chunk `call` of a trial, its inputs staged just before it (the reference's: set `set`; the
  // candidate's: freshly drawn); `check`: its output is compared with the reference's on the
  // same inputs (trial_pairs.hpp CheckPattern).
  void reference_chunk(int trial, int call, const TrialChunk& chunk, TrialSamples& samples, int set,
                       bool check);
  bool candidate_chunk(int trial, int call, const TrialChunk& chunk, TrialSamples& samples,
                       bool check);
  void reference_trial(int trial, TrialSamples& samples);
  // One calibration request: the child's own kernel timed like a candidate call.
  enum class Calibration : std::uint8_t { no, yes };
  struct TimedReply {
    protocol::Reply reply;
    double wall_ms = 0.0;
  };
  std::optional<TimedReply> ask_time(int warmup, int iterations, Calibration calibration);
  // Adds one calibration's wall time less its latency to `samples` (none for a reply in another
  // mode than asked); false when the request failed, which failed the evaluation.
  bool calibrate(std::vector<double>& samples);
  // The calibrations before the candidate is loaded that cap the phase's (trial_pairs.hpp
  // calibration_cap), into m_preload_calibration_ms.
  bool preload_calibrations();
  // How much of its calls' wall time the candidate's latencies leave unexplained (after a
  // phase's trials), recorded in the timing report.
  UnexplainedTime unexplained_wall_time();
  // Whether the candidate's latency is at least the problem's speed of light on this GPU
  // (catalogue row 21); records it, and fails the evaluation when it is not.
  bool within_speed_of_light();
  // `slot`: the trial entry to write; none appends one.
  bool trial_pair(int trial, bool measure_reference, std::optional<std::size_t> slot = {});
  void store_trial(std::optional<std::size_t> slot, const TrialSamples* reference,
                   const TrialSamples* candidate);
  bool retime_outlier_pairs();
  void switch_to_strict(std::string reason);
  bool recheck();
  // The counts cache's key for this evaluation, when it may use the cache (counts_cache.hpp);
  // sets m_cached_counts on a hit, before the child would open its counter session.
  void look_up_counts(const std::filesystem::path& library);
  bool counts();
  bool reuse_counts();
  void store_counts(const trace::Json& counts);
  bool end_counter_session();
  void finish_child();
  void release_warm_state();
  void tool_passes(const std::filesystem::path& binary, const std::filesystem::path& library);
  void sanitize(const std::filesystem::path& binary, const SingleCallFiles& files);
  void audit(const std::filesystem::path& binary, const SingleCallFiles& files);
  void debug(const std::filesystem::path& binary, const SingleCallFiles& files);

  std::optional<protocol::Reply> ask(const protocol::Request& request);
  void fail(trace::EvaluationStatus status, std::string message);
  // Copies set `set`'s inputs into the call slot the child maps (EvalBuffers::stage), waited for.
  void stage(int set);
  // `listed`: the comparison is named in the evaluation's list (timed calls are counted instead).
  bool outputs_match(int set, std::string_view when, bool listed = true);
  bool inputs_unchanged(std::string_view when);

  Evaluation& m_result;
  const suite::Suite& m_suite;
  const suite::Problem& m_problem;
  const EvalOptions& m_options;
  ReferenceLatencyCache& m_cache;
  CountsCache& m_counts_cache;
  std::optional<CountsKey> m_counts_key;
  std::optional<CachedCounts> m_cached_counts;
  std::string m_counts_cache_note; // DynamicReport::counts_cache
  WarmState& m_warm;
  util::PhaseLog& m_phases;
  util::ProcessRunner& m_tool_runner;
  cuda::Stream m_stream;
  std::unique_ptr<WarmReference> m_reference;
  std::unique_ptr<WarmInputs> m_inputs;
  EvalBuffers* m_buffers = nullptr; // m_inputs->buffers
  std::string m_inputs_key;
  const CandidateRun* m_run = nullptr;
  // Candidate::warm_up_cubins: where a candidate compiled in its warm-up leaves its cubins.
  std::optional<std::filesystem::path> m_warm_up_folder;
  std::vector<std::filesystem::path> m_warm_cubins; // that folder's after the warm-up
  std::optional<CandidateProcess> m_child;
  std::filesystem::path m_log_path;
  bool m_child_holds_counter_session = false; // spare_child.hpp "The counter session"
  RunningEvaluation* m_running = nullptr;     // run()'s, while it runs
  bool m_inputs_modified = false;
  bool m_inputs_warm = false;
  // The protocol's own secret, drawn for every evaluation whatever its seed: which timed calls
  // are compared, where the calibrations go and the fresh inputs of the timed calls follow it,
  // so a caller-fixed seed (EvalOptions::seed) fixes only the correctness sets.
  std::uint64_t m_secret = draw_secret();
  std::optional<CheckPattern> m_checks; // which timed calls are compared, from m_secret
  // Wall time less reported latency of each timed call without warm-ups, per side.
  std::vector<double> m_candidate_overhead_ms, m_reference_overhead_ms, m_calibration_ms;
  std::vector<double> m_preload_calibration_ms; // before the load; every phase's cap
  measure::TimingMode m_mode = measure::TimingMode::batched;
};

} // namespace ptxbench::exec::detail
