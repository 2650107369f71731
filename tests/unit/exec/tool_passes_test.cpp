// The pure parts of the sanitizer and ncu-audit passes, on tool outputs captured on an H200
// (tests/data/measure, saved by tests/unit/measure/tools_gpu.cu): the finding sentence, the
// single-call reply, and the agreement of ncu's counts with the in-process counts.
#include "exec/tool_passes.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

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

// In-process counts of the Hopper table's metrics, as the child's count reply carries them.
protocol::Counts hopper_counts(double gmma, double tma_load, double tma_store = 0.0) {
  protocol::Counts counts;
  counts.available = true;
  counts.arch = "sm_90a";
  counts.metrics = sass::metric_names(*sass::counters_for("sm_90a"));
  counts.totals = {gmma, tma_load, tma_store, 0.0, 1e9};
  return counts;
}

const sass::ArchCounters* hopper() {
  return sass::counters_for("sm_90a");
}

TEST(NcuAuditAgreement, EqualCountsAgree) {
  NcuAuditPass pass = audited();
  compare_counts(pass, hopper(), hopper_counts(143360.0, 17920.0));
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  ASSERT_EQ(pass.counts.size(), 4u);
  EXPECT_EQ(pass.counts[0].family, "gmma");
  EXPECT_EQ(pass.counts[0].ncu, 143360u);
  EXPECT_EQ(pass.counts[0].metric, "smsp__sass_inst_executed_op_shared_gmma.sum");
  EXPECT_TRUE(pass.counts[0].agree);
  EXPECT_EQ(to_json(pass)["agreement"], "agree");
  EXPECT_EQ(to_json(pass)["families"]["tma_load"]["in_process"], 17920.0);
  EXPECT_EQ(to_json(pass)["families"]["tma_store"]["match"], "presence");
  EXPECT_NE(render_text(pass).find("gmma 143360 (in-process 143360)"), std::string::npos)
      << render_text(pass);
}

TEST(NcuAuditAgreement, OneDifferentFamilyIsADisagreementNamingIt) {
  NcuAuditPass pass = audited();
  compare_counts(pass, hopper(), hopper_counts(143360.0, 17919.0));
  EXPECT_EQ(pass.agreement, Agreement::disagree);
  EXPECT_EQ(pass.agreement_note, "tma_load: ncu 17920 vs in-process 17919");
  EXPECT_FALSE(pass.counts[1].agree);
  EXPECT_TRUE(pass.counts[0].agree);
}

// op_tma_st counts a quarter of the UTMASTG warp instructions on an H200: the row compares
// presence, so a store the source page has and the counter saw agrees, one it did not see does not.
TEST(NcuAuditAgreement, APresenceRowAgreesOnNonZeroAndDisagreesOnZero) {
  NcuAuditPass pass = audited();
  pass.audit->opcodes["UTMASTG.2D"] = {400, 400, std::nullopt, 1}; // no thread_inst_executed
  compare_counts(pass, hopper(), hopper_counts(143360.0, 17920.0, 100.0));
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  EXPECT_EQ(pass.counts[2].ncu, 400u);
  compare_counts(pass, hopper(), hopper_counts(143360.0, 17920.0, 0.0));
  EXPECT_EQ(pass.agreement, Agreement::disagree);
  EXPECT_EQ(pass.agreement_note, "tma_store: ncu 400 vs in-process 0 (compared for presence)");
}

// A Triton GEMM on an H200 issues each UTMALDG from all 8 warps under a uniform predicate on in
// one of them: ncu's inst_executed counts 4,759,552 warp instructions, the range profiler's
// op_tma_ld 573,440 (bench/results/counting_h200.md). With thread_inst_executed on the page the
// audit compares the predicated-on count, and agrees; the elected-thread CUDA GEMM's rows (one
// active thread) still compare every warp instruction, as measured.
TEST(NcuAuditAgreement, ThePredicatedOnCountIsComparedWhereThePageDerivesIt) {
  // inst_executed and thread_inst_executed_true as the H200 page had them; thread_inst_executed
  // 32 per warp instruction, as a uniform instruction of a full warp runs.
  const std::string triton = "\"Kernel Name\",\"matmul_kernel_persistent\",\n"
                             "\"Address\",\"Source\",\"inst_executed\","
                             "\"thread_inst_executed_true\",\"thread_inst_executed\"\n"
                             "\"0x10\",\"@UP5 UTMALDG.2D [UR8], [UR12]\",\"28,672\",\"114,688\","
                             "\"917,504\"\n"
                             "\"0x20\",\"@UP0 UTMALDG.2D [UR24], [UR12]\",\"2,293,760\","
                             "\"8,830,976\",\"73,400,320\"\n"
                             "\"0x30\",\"HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20], R24\","
                             "\"2,293,760\",\"73,400,320\",\"73,400,320\"\n";
  auto audit = measure::parse_ncu_source_csv(triton);
  ASSERT_TRUE(audit) << audit.error().message;
  NcuAuditPass pass;
  pass.ran = true;
  pass.audit = std::move(*audit);
  // 114,688/32 + 8,830,976/32 = 3,584 + 275,968 predicated-on warp instructions.
  compare_counts(pass, hopper(), hopper_counts(2293760.0, 279552.0));
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  EXPECT_EQ(pass.counts[1].ncu, 2322432u);
  ASSERT_TRUE(pass.counts[1].ncu_predicated_on);
  EXPECT_DOUBLE_EQ(*pass.counts[1].ncu_predicated_on, 279552.0);
  EXPECT_EQ(to_json(pass)["families"]["tma_load"]["ncu_predicated_on"], 279552.0);
  EXPECT_NE(render_text(pass).find("tma_load 2322432 (279552 predicated on) (in-process 279552)"),
            std::string::npos)
      << render_text(pass);
  // Every warp instruction is not what the counter counts: that in-process value disagrees.
  compare_counts(pass, hopper(), hopper_counts(2293760.0, 2322432.0));
  EXPECT_EQ(pass.agreement, Agreement::disagree);
  EXPECT_EQ(pass.agreement_note, "tma_load: ncu 279552 predicated on vs in-process 2322432");
}

// The rows come from the evaluation's architecture: a B200's audit compares the TCGEN05 metrics,
// and an architecture without a table leaves the agreement unknown.
TEST(NcuAuditAgreement, TheRowsAreTheArchitecturesCounters) {
  NcuAuditPass pass = audited();
  pass.audit->opcodes["UTCHMMA"] = {64, 64, std::nullopt, 1};
  pass.audit->opcodes["LDTM.x32"] = {128, 4096, std::nullopt, 1};
  protocol::Counts counts;
  counts.available = true;
  counts.metrics = sass::metric_names(*sass::counters_for("sm_100a"));
  counts.totals.assign(counts.metrics.size(), 0.0);
  counts.totals[0] = 64.0;  // utcmma
  counts.totals[1] = 128.0; // tmem_ldt
  counts.totals[5] = 1.0;   // tma_ld (the fixture's UTMALDG rows)
  compare_counts(pass, sass::counters_for("sm_100a"), counts);
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  ASSERT_EQ(pass.counts[0].family, "tcgen05_mma");
  EXPECT_EQ(pass.counts[0].ncu, 64u);
  EXPECT_EQ(pass.counts[1].ncu, 128u);
  compare_counts(pass, nullptr, counts);
  EXPECT_EQ(pass.agreement, Agreement::unknown);
  EXPECT_TRUE(pass.counts.empty());
}

TEST(NcuAuditAgreement, AMetricTheCounterDidNotMeasureLeavesTheAgreementUnknown) {
  NcuAuditPass pass = audited();
  protocol::Counts counts = hopper_counts(143360.0, 17920.0);
  counts.metrics.erase(counts.metrics.begin() + 3); // tma_red rejected by the chip
  counts.totals.erase(counts.totals.begin() + 3);
  compare_counts(pass, hopper(), counts);
  EXPECT_EQ(pass.agreement, Agreement::unknown);
  EXPECT_NE(pass.agreement_note.find("tma_reduce: the in-process counter has no value"),
            std::string::npos)
      << pass.agreement_note;
}

TEST(NcuAuditAgreement, WithoutInProcessCountsTheAgreementIsUnknownWithTheReason) {
  NcuAuditPass pass = audited();
  compare_counts(pass, hopper(), protocol::Counts::unavailable("profiling not permitted"));
  EXPECT_EQ(pass.agreement, Agreement::unknown);
  EXPECT_EQ(pass.agreement_note, "profiling not permitted");
  EXPECT_FALSE(pass.counts[0].in_process);
  NcuAuditPass no_pass = audited();
  compare_counts(no_pass, hopper(), std::nullopt);
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

// A stand-in `ncu` (ncu cannot run here): writes its arguments and one variable of its
// environment to args.txt in `dir`, then prints the source page captured on an H200.
struct NcuScratch {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("ptxbench-ncu-test-" + std::to_string(::getpid()));
  NcuScratch() { std::filesystem::create_directories(path); }
  ~NcuScratch() { std::filesystem::remove_all(path); }

  std::filesystem::path ncu() const {
    const std::filesystem::path script = path / "ncu";
    const std::string args = (path / "args.txt").string();
    std::ofstream(script) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << args
                          << "\necho \"mark=$PTXBENCH_NCU_MARK\" >> " << args << "\ncat "
                          << PTXBENCH_TEST_DATA << "/measure/ncu_source_wgmma_gemm_m128.csv\n";
    ::chmod(script.c_str(), 0755);
    return script;
  }
};

// The Triton child's single call runs under ncu with the child's own words and environment
// (its Python, its Triton cache) and kernel replay; a kernel.so's with application replay.
TEST(NcuAuditPass, TheSingleCallRunsUnderNcuWithTheChildsEnvironmentAndReplay) {
  NcuScratch dir;
  util::PosixProcessRunner runner;
  const ChildCommand child{{"python3", "-m", "ptxbench_triton.child", "--single-call", "spec.json",
                            "--nvtx-range", "ptxbench_eval"},
                           {"PTXBENCH_NCU_MARK=child-env"}};
  const NcuAuditPass pass = run_ncu_audit_pass(runner, child, measure::NcuReplay::kernel,
                                               std::chrono::seconds(20), dir.ncu());
  ASSERT_TRUE(pass.ran) << pass.reason;
  EXPECT_EQ(pass.audit->families.gmma, 143360u);
  auto args = util::read_file(dir.path / "args.txt");
  ASSERT_TRUE(args) << args.error().message;
  EXPECT_NE(args->find("--nvtx-include\nptxbench_eval/\n"), std::string::npos) << *args;
  EXPECT_NE(args->find("--replay-mode\nkernel\n"), std::string::npos) << *args;
  EXPECT_NE(args->find("-f\npython3\n-m\nptxbench_triton.child\n--single-call\nspec.json\n"),
            std::string::npos)
      << *args;
  EXPECT_NE(args->find("mark=child-env\n"), std::string::npos) << *args;
  const NcuAuditPass cuda =
      run_ncu_audit_pass(runner, ChildCommand{{"ptxbench-candidate"}, {}},
                         measure::NcuReplay::application, std::chrono::seconds(20), dir.ncu());
  ASSERT_TRUE(cuda.ran) << cuda.reason;
  args = util::read_file(dir.path / "args.txt");
  ASSERT_TRUE(args);
  EXPECT_NE(args->find("--replay-mode\napplication\n"), std::string::npos) << *args;
  const NcuAuditPass missing =
      run_ncu_audit_pass(runner, child, measure::NcuReplay::kernel, std::chrono::seconds(5), {});
  EXPECT_FALSE(missing.ran);
  EXPECT_EQ(missing.reason, "ncu not found (PATH, /usr/local/cuda/bin)");
}

// An ncu that refuses thread_inst_executed (exit 1, as for an unknown metric) is asked again
// with the paper's two metrics; the audit runs and compares every warp instruction.
TEST(NcuAuditPass, AnNcuThatRefusesThreadInstExecutedIsAskedAgainWithoutIt) {
  NcuScratch dir;
  const std::filesystem::path ncu = dir.path / "ncu";
  const std::string calls = (dir.path / "calls.txt").string();
  std::ofstream(ncu) << "#!/bin/sh\necho \"$*\" >> " << calls
                     << "\ncase \"$*\" in *thread_inst_executed_true,thread_inst_executed*) "
                        "echo '==ERROR== unknown metric thread_inst_executed' >&2; exit 1;; esac\n"
                     << "cat " << PTXBENCH_TEST_DATA << "/measure/ncu_source_wgmma_gemm_m128.csv\n";
  ::chmod(ncu.c_str(), 0755);
  util::PosixProcessRunner runner;
  NcuAuditPass pass =
      run_ncu_audit_pass(runner, ChildCommand{{"ptxbench-candidate"}, {}},
                         measure::NcuReplay::application, std::chrono::seconds(20), ncu);
  ASSERT_TRUE(pass.ran) << pass.reason;
  auto lines = util::read_file(calls);
  ASSERT_TRUE(lines);
  EXPECT_EQ(std::count(lines->begin(), lines->end(), '\n'), 2) << *lines;
  EXPECT_NE(lines->find("--metrics inst_executed,thread_inst_executed_true --clock-control"),
            std::string::npos)
      << *lines;
  compare_counts(pass, hopper(), hopper_counts(143360.0, 17920.0));
  EXPECT_EQ(pass.agreement, Agreement::agree) << pass.agreement_note;
  EXPECT_FALSE(pass.counts[1].ncu_predicated_on);
}

TEST(NcuAuditPass, TheAuditCallHasTheNvtxRangeAndOneWarmUp) {
  const protocol::SingleCallOptions call = audit_call_options();
  EXPECT_EQ(call.nvtx_range, kAuditNvtxRange);
  EXPECT_EQ(call.warmup, 1);
}

} // namespace
} // namespace ptxbench::exec
