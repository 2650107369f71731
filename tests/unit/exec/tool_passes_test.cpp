// The pure parts of the sanitizer and ncu-audit passes, on tool outputs captured on an H200
// (tests/data/measure, saved by tests/unit/measure/tools_gpu.cu): the finding sentence, the
// single-call reply, and the agreement of ncu's counts with the in-process counts.
#include "exec/tool_passes.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace ptxbench::exec {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PTXBENCH_TEST_DATA) + "/measure/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

std::string reply_line(const protocol::Reply& reply) {
  return std::string(protocol::kSingleCallReplyPrefix) + encode(reply) + "\n";
}

util::ProcessResult finished(std::string out, int exit_code) {
  util::ProcessResult result;
  result.exit_code = exit_code;
  result.out = std::move(out);
  result.elapsed = std::chrono::milliseconds(2500);
  return result;
}

TEST(SanitizerPass, OutOfBoundsWriteBecomesAFindingWithKernelAndSourceLine) {
  protocol::Reply failed =
      protocol::Reply::failure(protocol::ChildError::cuda, "CUDA error after the call");
  failed.cuda_error = "cudaErrorLaunchFailure: unspecified launch failure";
  const SanitizerPass pass =
      sanitizer_pass_from(finished(fixture("sanitizer_memcheck_oob.txt") + reply_line(failed), 99));
  EXPECT_TRUE(pass.ran);
  EXPECT_FALSE(pass.report.clean);
  EXPECT_EQ(pass.report.exit_code, 99);
  EXPECT_EQ(pass.report.error_count, 1049u);
  EXPECT_EQ(pass.finding,
            "compute-sanitizer memcheck: Invalid __global__ write of size 4 bytes in "
            "oob_write(int *, int) at oob.cu:4 (Access to 0x7feb48801000 is out of "
            "bounds and is 97 bytes after the nearest allocation at 0x7feb48800000 of "
            "size 4,000 bytes); 1049 errors in all");
  EXPECT_FALSE(pass.call_completed);
  EXPECT_EQ(pass.call_outcome,
            "CUDA error after the call: cudaErrorLaunchFailure: unspecified launch failure");
  EXPECT_EQ(to_json(pass)["first_error"]["line"], 4);
  EXPECT_EQ(to_json(pass)["first_error"]["file"], "oob.cu");
  EXPECT_NE(render_text(pass).find("1049 error(s)"), std::string::npos) << render_text(pass);
}

TEST(SanitizerPass, AFindingThatMadeTheVerdictIsPrintedOnce) {
  protocol::Reply failed =
      protocol::Reply::failure(protocol::ChildError::cuda, "CUDA error after the call");
  Evaluation ev;
  ev.gpu_ran = true;
  ev.problem = "gemm_n7168_k5120";
  ev.sanitizer =
      sanitizer_pass_from(finished(fixture("sanitizer_memcheck_oob.txt") + reply_line(failed), 99));
  ev.status = trace::EvaluationStatus::runtime_error;
  ev.message = ev.sanitizer->finding + " — without the sanitizer: CUDA error after the call";
  const std::string text = render_text(ev);
  const std::string finding = ev.sanitizer->finding;
  const std::size_t first = text.find(finding);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(finding, first + 1), std::string::npos) << text;
  EXPECT_NE(text.find("sanitizer: 1049 error(s) (2.5 s); the first is the status message above"),
            std::string::npos)
      << text;
  // A finding that did not make the verdict (not the status message) stays on its line.
  ev.message = "an earlier verdict";
  EXPECT_NE(render_text(ev).find("error(s) (2.5 s) — " + finding), std::string::npos);
}

TEST(SanitizerPass, CleanReportWithACompletedCallHasNoFinding) {
  const SanitizerPass pass = sanitizer_pass_from(
      finished(fixture("sanitizer_memcheck_clean.txt") + reply_line(protocol::Reply{}), 0));
  EXPECT_TRUE(pass.ran);
  EXPECT_TRUE(pass.report.clean);
  EXPECT_TRUE(pass.finding.empty());
  EXPECT_TRUE(pass.call_completed);
  EXPECT_EQ(to_json(pass)["clean"], true);
  EXPECT_EQ(render_text(pass), "  sanitizer: memcheck clean (one call on input set 0, 2.5 s)\n");
}

TEST(SanitizerPass, ACandidateThatExitsBeforeItsCallIsCleanButNotCompleted) {
  const SanitizerPass pass =
      sanitizer_pass_from(finished(fixture("sanitizer_memcheck_clean.txt"), 0));
  EXPECT_TRUE(pass.ran);
  EXPECT_TRUE(pass.finding.empty());
  EXPECT_FALSE(pass.call_completed);
  EXPECT_EQ(pass.call_outcome, "the single-call process exited with status 0 before its call "
                               "completed");
  EXPECT_NE(render_text(pass).find("; but the single-call process exited"), std::string::npos);
}

TEST(SanitizerPass, NoSanitizerReportMeansItDidNotRun) {
  const SanitizerPass pass = sanitizer_pass_from(finished("error: no CUDA-capable device\n", 1));
  EXPECT_FALSE(pass.ran);
  EXPECT_NE(pass.reason.find("printed no report"), std::string::npos) << pass.reason;
  EXPECT_EQ(to_json(pass)["ran"], false);
  EXPECT_EQ(render_text(pass).rfind("  sanitizer: not run", 0), 0u);
}

NcuAuditPass audited() {
  auto audit = measure::parse_ncu_source_csv(fixture("ncu_source_wgmma_gemm_m128.csv"));
  EXPECT_TRUE(audit) << audit.error().message;
  NcuAuditPass pass;
  pass.ran = true;
  pass.audit = std::move(*audit);
  return pass;
}

TEST(NcuAuditAgreement, EqualCountsAgree) {
  NcuAuditPass pass = audited();
  compare_counts(pass, trace::Json{{"available", true},
                                   {"gmma", 143360.0},
                                   {"tma_load", 17920.0},
                                   {"tma_store", 0.0},
                                   {"tma_reduce", 0.0}});
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  ASSERT_EQ(pass.counts.size(), 4u);
  EXPECT_EQ(pass.counts[0].family, "gmma");
  EXPECT_EQ(pass.counts[0].ncu, 143360u);
  EXPECT_TRUE(pass.counts[0].agree);
  EXPECT_EQ(to_json(pass)["agreement"], "agree");
  EXPECT_EQ(to_json(pass)["families"]["tma_load"]["in_process"], 17920.0);
  EXPECT_NE(render_text(pass).find("gmma 143360 (in-process 143360)"), std::string::npos)
      << render_text(pass);
}

TEST(NcuAuditAgreement, OneDifferentFamilyIsADisagreementNamingIt) {
  NcuAuditPass pass = audited();
  compare_counts(pass, trace::Json{{"available", true},
                                   {"gmma", 143360.0},
                                   {"tma_load", 17919.0},
                                   {"tma_store", 0.0},
                                   {"tma_reduce", 0.0}});
  EXPECT_EQ(pass.agreement, Agreement::disagree);
  EXPECT_EQ(pass.agreement_note, "tma_load: ncu 17920 vs in-process 17919");
  EXPECT_FALSE(pass.counts[1].agree);
  EXPECT_TRUE(pass.counts[0].agree);
}

TEST(NcuAuditAgreement, WithoutInProcessCountsTheAgreementIsUnknownWithTheReason) {
  NcuAuditPass pass = audited();
  compare_counts(pass, trace::Json{{"available", false}, {"reason", "profiling not permitted"}});
  EXPECT_EQ(pass.agreement, Agreement::unknown);
  EXPECT_EQ(pass.agreement_note, "profiling not permitted");
  EXPECT_FALSE(pass.counts[0].in_process);
  NcuAuditPass no_pass = audited();
  compare_counts(no_pass, std::nullopt);
  EXPECT_EQ(no_pass.agreement, Agreement::unknown);
  EXPECT_EQ(no_pass.agreement_note, "the in-process count pass did not run");
  EXPECT_TRUE(to_json(no_pass)["families"]["gmma"]["in_process"].is_null());
}

TEST(NcuAuditAgreement, APassThatDidNotRunSaysWhy) {
  NcuAuditPass pass;
  pass.reason = "ncu not found (PATH, /usr/local/cuda/bin)";
  EXPECT_EQ(render_text(pass),
            "  ncu audit: not run — ncu not found (PATH, /usr/local/cuda/bin)\n");
  EXPECT_EQ(to_json(pass)["reason"], pass.reason);
}

} // namespace
} // namespace ptxbench::exec
