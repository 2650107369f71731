// The GPU phases of one evaluation (evaluator.hpp has the flow and its invariants): inputs and
// references, the candidate child, correctness, interleaved timing, the re-check of the last
// timed output, the dynamic-count pass and, on request, the sanitizer and ncu-audit passes
// (tool_passes.hpp). Internal to exec/.
#pragma once

#include "exec/buffers.hpp"
#include "exec/child_process.hpp"
#include "exec/evaluation.hpp"
#include "exec/evaluator.hpp"
#include "exec/tool_passes.hpp"
#include "measure/timing.hpp"
#include "reference/reference.hpp"

#include <memory>
#include <optional>

namespace ptxbench::exec::detail {

class GpuEvaluation {
public:
  GpuEvaluation(Evaluation& result, const suite::Suite& suite, const suite::Problem& problem,
                const EvalOptions& options, ReferenceLatencyCache& cache,
                util::PhaseLog& phases, util::ProcessRunner& tool_runner)
      : m_result(result), m_suite(suite), m_problem(problem), m_options(options),
        m_cache(cache), m_phases(phases), m_tool_runner(tool_runner) {}

  // Fills m_result; errors only for a broken set-up (no reference, out of memory).
  util::Status run(const std::filesystem::path& candidate_binary,
                   const std::filesystem::path& library);

private:
  util::Status prepare();
  bool start_child(const std::filesystem::path& binary, const std::filesystem::path& library);
  bool correctness();
  bool timing();
  bool reference_trial(std::vector<double>& medians);
  bool candidate_trial(int trial);
  bool recheck();
  void counts();
  void finish_child();
  void tool_passes(const std::filesystem::path& binary, const std::filesystem::path& library);
  void sanitize(const std::filesystem::path& binary, const SingleCallFiles& files);
  void audit(const std::filesystem::path& binary, const SingleCallFiles& files);

  std::optional<Reply> ask(const Request& request);
  void fail(trace::EvaluationStatus status, std::string message);
  bool outputs_match(int set, std::string_view when);
  bool inputs_unchanged(std::string_view when);

  Evaluation& m_result;
  const suite::Suite& m_suite;
  const suite::Problem& m_problem;
  const EvalOptions& m_options;
  ReferenceLatencyCache& m_cache;
  util::PhaseLog& m_phases;
  util::ProcessRunner& m_tool_runner;
  std::optional<Stream> m_stream;
  std::unique_ptr<reference::Reference> m_reference;
  std::optional<EvalBuffers> m_buffers;
  std::optional<CandidateProcess> m_child;
  std::filesystem::path m_log_path;
  std::uint64_t m_input_digest = 0;
  int m_last_set = -1;
  bool m_reference_cached = false;
};

} // namespace ptxbench::exec::detail
