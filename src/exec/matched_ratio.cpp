#include "exec/matched_ratio.hpp"

namespace ptxbench::exec {

SetJudgement judge_set(const CompareStats& stats, double required_matched_ratio) {
  SetJudgement judgement;
  if (stats.elements > 0)
    judgement.matched_ratio =
        1.0 - static_cast<double>(stats.failed) / static_cast<double>(stats.elements);
  if (stats.failed == 0) {
    judgement.correct = true;
    return judgement;
  }
  const std::uint64_t non_finite =
      stats.candidate_nan + stats.candidate_inf + stats.reference_nonfinite;
  judgement.correct = non_finite == 0 && judgement.matched_ratio >= required_matched_ratio;
  if (judgement.correct)
    judgement.tolerated = stats.failed;
  return judgement;
}

} // namespace ptxbench::exec
