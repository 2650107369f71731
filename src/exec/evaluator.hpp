// The GPU evaluation of one candidate (docs/evaluation.md; DESIGN.md §4).
//
// Problem. Decide whether a candidate kernel is correct, how fast it is against the library
// baseline, and whether the required tensor-core instructions really ran — while the
// candidate's code may crash, hang, trap, leave the GPU in a sticky error state, lie about
// its outputs, mutate its inputs, or try to hide work from the timer.
//
// Approach. The supervisor (this class, one per GPU) owns the CUDA context, every buffer,
// the reference outputs and the reference timing; candidate code only ever runs in a fresh
// `ptxbench-candidate` child per evaluation (child_process.hpp). The flow is a list of timed
// phases:
//   check     the language's static check (frontend/, Frontend::check: for CUDA gate, nvcc,
//             static SASS report; for Triton its gate)           → COMPILE_ERROR
//   gpu       is there a device? if not, stop here ("needs a GPU")
//   inputs    N secret-seeded sets on the GPU, reference outputs per set
//   child     start, load (signature check)                        → COMPILE_ERROR/RUNTIME_ERROR
//   correct   per set: sentinel, call, inputs unchanged, compare    → INCORRECT_NUMERICAL
//   timing    trials interleaved: reference (here), candidate (child); NVML around them
//   recheck   a ping answered with its own id (no forged reply was taken for a real one);
//             the last timed output against its set's reference; inputs unchanged again
//   counts    dynamic instruction counts, a separate pass
//   sanitizer on request: compute-sanitizer memcheck around one call  → RUNTIME_ERROR
//   audit     on request: the paper's ncu source-counter audit, compared with `counts`
//   debugger  on request: cuda-gdb around one call: the faulting kernel, block, thread and
//             line, as evidence (the status stays the one above)
//   verdicts  dynamic states and tensor-path coverage of the candidate's own kernels; the
//             launch rules (launch_rules.hpp): a refused run-time load, a foreign kernel or
//             work that differs between calls        → RUNTIME_ERROR
// A deadline passing kills the child's process group (TIMEOUT); a dead child, a CUDA error
// in it or a protocol violation is RUNTIME_ERROR with the error text and the child's log.
//
// Warm state. One Evaluator serves many evaluations on one GPU (the service keeps one per
// GPU) and keeps between them (warm_state.hpp): the seeded input sets and reference outputs
// per (problem, workload, seed, set count), bounded by EvaluatorOptions::warm_bytes and
// evicted least recently used, so an evaluation with warm references generates no inputs and
// runs no reference for outputs; the library references (plans, handles); and a spare child
// (spare_child.hpp), prepared in the background while the GPU is idle. The child is prepared while
// the inputs are (looked up or) made.
//
// Concurrency. evaluate() may be called from several threads for one GPU. A reader/writer
// lock (gpu_lock.hpp) orders their GPU work: timing, counting and the correctness calls after
// the first hold it exclusively (nothing else the supervisor controls runs on the GPU while a
// trial is timed or counted, or while the calls the launch rules time against it run), every
// other GPU phase — inputs and reference outputs, a child's context, the first correctness
// call, re-check, sanitizer — holds it shared; the ncu audit holds it exclusively. Checks
// (nvcc) hold nothing.
//
// Invariants. The supervisor's context never runs candidate code, so it survives every
// failure and the next evaluation starts clean; every status comes with a message; late work
// after a timed call is RUNTIME_ERROR (a call that has not finished when it returns cannot be
// timed honestly); a foreign kernel fails the evaluation with its name. Leased input
// sets are verified against their digest before each use, so a corrupted lease is rebuilt.
#pragma once

#include "exec/check.hpp"
#include "exec/counts_cache.hpp"
#include "exec/eval_options.hpp"
#include "exec/evaluation.hpp"
#include "exec/reference_cache.hpp"
#include "measure/timing.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

namespace ptxbench::exec {

struct EvaluatorOptions {
  // Device memory the idle warm input sets and reference outputs may hold.
  std::size_t warm_bytes = std::size_t{16} << 30;
  // Whether a spare candidate child is kept started (spare_child.hpp).
  ChildStart children = ChildStart::spare;
  // When a prepared spare may open the GPU's counter session (spare_child.hpp "The counter
  // session").
  CounterSessionAhead counter_session = CounterSessionAhead::when_idle;
  // When the spare child is prepared (spare_child.hpp "Preparing beside an evaluation").
  SparePrepare spare_prepare = SparePrepare::beside_evaluation;
  // The CUDA device this Evaluator evaluates on: the supervisor's threads select it and its
  // candidate children are started for it (`ptxbench-candidate --device`).
  int device = 0;
  // Languages with a child of their own (Triton): the interpreter that has torch and Triton,
  // the folder holding ptxbench_triton/ (empty: python_root_path()) and libptxbench_child.so
  // (empty: child_library_path()).
  std::filesystem::path python = "python3";
  std::filesystem::path python_root;
  std::filesystem::path child_library;
  // Where reused counts are kept (EvalOptions::counts_cache): unset, CountsCache::default_folder();
  // empty, in memory only.
  std::optional<std::filesystem::path> counts_folder;
};

namespace detail {
struct WarmState;
}

class Evaluator {
public:
  // `candidate_binary`: empty finds ptxbench-candidate (candidate_binary_path()).
  Evaluator(const Checker& checker, const suite::Suite& suite,
            const std::filesystem::path& candidate_binary = {},
            std::filesystem::path reference_cache = ReferenceLatencyCache::default_file(),
            const EvaluatorOptions& evaluator_options = {});
  ~Evaluator();

  // Errors only when no verdict exists (nvcc missing, a broken set-up, the supervisor's own
  // failure, named by phase); everything the candidate does is an Evaluation. Never throws
  // for a candidate's behaviour. Safe to call from several threads. The candidate's language
  // is options.language, whose frontend (frontend::of) checks it and says how it runs.
  util::Expected<Evaluation> evaluate(const std::string& source, const suite::Problem& problem,
                                      const EvalOptions& options);

  // Device bytes of idle warm input sets and reference outputs.
  std::size_t warm_bytes() const;
  // Spare candidate processes alive (children of this process that run no candidate).
  int spare_processes() const;
  // Waits until the children of finished evaluations, stopped in the background, have ended.
  void settle();
  // Whether a spare child may hold the GPU's counter session between evaluations
  // (SpareChildren::allow_sessions_ahead): off while another process shares the GPU.
  void allow_counter_sessions_ahead(bool allowed);

private:
  util::Status gpu_phases(Evaluation& ev, const frontend::Frontend& language,
                          const frontend::Candidate& candidate, const std::string& source,
                          const suite::Problem& problem, const EvalOptions& options,
                          util::PhaseLog& phases);

  const Checker& m_checker;
  const suite::Suite& m_suite;
  std::filesystem::path m_candidate_binary;
  ReferenceLatencyCache m_reference_cache;
  CountsCache m_counts_cache;
  util::PosixProcessRunner m_tool_runner; // compute-sanitizer and ncu, the Triton gate
  frontend::ChildPaths m_child_paths;
  std::unique_ptr<detail::WarmState> m_warm;
};

// $PTXBENCH_CANDIDATE, else ptxbench-candidate next to the running executable, else the
// build tree's.
std::filesystem::path candidate_binary_path();

} // namespace ptxbench::exec
