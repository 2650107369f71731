// The launch rules and the dynamic verdict on hand-built evidence: what the child reported in
// each phase, decided without a GPU. The H200 side of the same rules is evaluator_gpu.cpp.
#include "exec/dynamic_report.hpp"
#include "exec/launch_rules.hpp"
#include "sass/counters.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::exec;

namespace {

const std::string kGemm = "_Z10tiled_gemmPK13__nv_bfloat16S1_PS_ibS1_";
const std::string kInit = "_Z10zero_fillPf";
const std::string kCublas = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";

sass::ArchReport own_functions(std::vector<std::string> mangled) {
  sass::ArchReport arch;
  arch.arch = "sm_90a";
  for (auto& name : mangled)
    arch.functions.push_back({name, name + "(demangled)", 0, {}, {}});
  return arch;
}

// Three first-sight correctness calls, the repeat, timed calls, all launching `kernels`.
LaunchEvidence honest(std::vector<std::string> kernels, double call_ms = 2.0) {
  LaunchEvidence e;
  for (int set = 0; set < 3; ++set)
    e.correctness.push_back({set, false, kernels, call_ms});
  e.correctness.push_back({2, true, kernels, call_ms * 0.9});
  e.timed.push_back({kernels, 150});
  e.counted = kernels;
  e.counted_launches = kernels.size();
  e.timed_ms = call_ms * 1.05; // cold L2: a little slower than the correctness calls
  return e;
}

TEST(LaunchRules, AnHonestCandidateBreaksNoRule) {
  const auto own = own_functions({kGemm, kInit});
  EXPECT_FALSE(judge_launches(honest({kGemm}), &own));
  // A one-time set-up kernel in the process's first call is allowed.
  LaunchEvidence setup = honest({kGemm});
  setup.correctness[0].launches = {kGemm, kInit};
  EXPECT_FALSE(judge_launches(setup, &own));
}

TEST(LaunchRules, AKernelFromAnotherLibraryFailsAndIsNamed) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kCublas});
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::foreign_kernel);
  EXPECT_EQ(broken->kernels, std::vector<std::string>{kCublas});
  EXPECT_NE(broken->message.find(kCublas), std::string::npos) << broken->message;
  EXPECT_NE(broken->message.find("banned-library rule"), std::string::npos);
  // Seen only in the counting pass, it still counts.
  LaunchEvidence counted = honest({kGemm});
  counted.counted.push_back(kCublas);
  EXPECT_EQ(foreign_kernels(counted, &own), std::vector<std::string>{kCublas});
}

// Catalogue row 1: identity, not name. A module the candidate's binary does not hold, loaded by
// means no import shows, that defines one of the candidate's kernel names: the launch may have
// been its, so the call fails; the candidate's own cubins alone break nothing.
TEST(LaunchRules, ASameNamedKernelFromAModuleThatIsNotTheCandidatesIsForeign) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm});
  e.own_cubins = std::vector<std::string>{"aa11", "bb22"};
  e.modules = {{"aa11", {kGemm, "other_own_kernel"}}, {"cc33", {"ptxbench_warmup"}}};
  EXPECT_FALSE(judge_launches(e, &own)) << "the harness's own module defines no launched name";
  e.modules.push_back({"dd44", {kGemm}});
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::foreign_kernel);
  EXPECT_EQ(broken->kernels, std::vector<std::string>{kGemm});
  EXPECT_NE(broken->message.find("not one of its own cubins"), std::string::npos)
      << broken->message;
  EXPECT_NE(broken->message.find("sha256:dd44"), std::string::npos) << broken->message;
  // A kernel seen only in the counting pass is judged too.
  LaunchEvidence counted = honest({kGemm});
  counted.own_cubins = std::vector<std::string>{"aa11"};
  counted.modules = {{"aa11", {kGemm}}, {"ee55", {"sneaky"}}};
  counted.counted.push_back("sneaky");
  ASSERT_EQ(impostor_kernels(counted, {"sneaky"}).size(), 1u);
  EXPECT_EQ(impostor_kernels(counted, {"sneaky"})[0].module_sha256, "ee55");
  // Without the candidate's identities (cuobjdump failed), the name rule stands alone.
  e.own_cubins.reset();
  EXPECT_FALSE(judge_launches(e, &own));
}

TEST(LaunchRules, ARefusedEntryPointLookupFailsBeforeAnythingElse) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm});
  e.refused = {"cuModuleLoadData"};
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::runtime_loading);
  EXPECT_NE(broken->message.find("cuModuleLoadData"), std::string::npos);
}

TEST(LaunchRules, TimedCallsThatLaunchOtherKernelsAreInconsistentWork) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm});
  e.timed = {{{kGemm}, 10}, {{}, 140}}; // 140 calls copied a cached result instead
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("140 of the 150 timed calls launched no kernel"),
            std::string::npos)
      << broken->message;
}

TEST(LaunchRules, ARepeatedCallThatLaunchesNothingIsInconsistentWork) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm});
  e.correctness.back().launches.clear();
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("repeated call"), std::string::npos) << broken->message;
}

TEST(LaunchRules, TheSameKernelFarFasterWhenTimedIsInconsistentWork) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm}, 40.0);
  e.timed_ms = 0.06; // a copy of a cached C, by the GEMM kernel itself
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("0.0600 ms"), std::string::npos) << broken->message;
  // At kReplayRatio of the first-sight time and above, it is not.
  e.timed_ms = 40.0 * kReplayRatio;
  EXPECT_FALSE(judge_launches(e, &own));
  // With one input set there is no first-sight call but the process's first: no time rule.
  LaunchEvidence one = honest({kGemm}, 40.0);
  one.correctness = {{0, false, {kGemm}, 40.0}, {0, true, {kGemm}, 39.0}};
  one.timed_ms = 0.06;
  EXPECT_FALSE(judge_launches(one, &own));
}

// The timed calls get inputs no call has seen, so a kept output can answer only the repeat of
// the last correctness call: the repeat is held to the same share of the first-sight time.
TEST(LaunchRules, ARepeatedCallFarFasterThanItsFirstSightIsInconsistentWork) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm}, 40.0);
  e.correctness.back().latency_ms = 0.06; // the kept C copied by the GEMM kernel itself
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("repeated call"), std::string::npos) << broken->message;
  EXPECT_NE(broken->message.find("under 50 % of the 40.0000 ms"), std::string::npos)
      << broken->message;
  e.correctness.back().latency_ms = 40.0 * kReplayRatio;
  EXPECT_FALSE(judge_launches(e, &own));
}

constexpr const char* kGmmaMetric = "smsp__sass_inst_executed_op_shared_gmma.sum";
constexpr const char* kTmaLoadMetric = "smsp__sass_inst_executed_op_tma_ld.sum";
constexpr const char* kFlopMetric = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum";

// The counting pass's raw counts as the child sends them (protocol/counts.hpp): CUPTI names the
// ranges 1, 2, … in launch order.
trace::Json counts(const std::vector<std::pair<std::string, trace::Json>>& ranges) {
  trace::Json list = trace::Json::array();
  for (std::size_t i = 0; i < ranges.size(); ++i)
    list.push_back(
        {{"kernel", std::to_string(i + 2)}, // a session's warm-up took range 1
         {"metrics",
          {{kGmmaMetric, ranges[i].second}, {kTmaLoadMetric, 0.0}, {kFlopMetric, 1e9}}}});
  const trace::Json totals{{kGmmaMetric, 0.0}, {kTmaLoadMetric, 0.0}, {kFlopMetric, 0.0}};
  return {{"available", true},
          {"metrics", totals},
          {"ranges", list},
          {"kernels", trace::Json::array()}};
}

// `launches`: the kernels the correctness calls launched, in order.
Evaluation gemm_evaluation(trace::Json raw, std::size_t static_gmma,
                           std::vector<std::string> launches = {kGemm}) {
  Evaluation ev;
  ev.launches.correctness.push_back({2, true, launches, 1.0});
  ev.check.arch = compile::Arch::sm_90a;
  sass::ArchReport arch = own_functions({kGemm});
  arch.target_families = sass::target_families_for("sm_90a");
  arch.totals[sass::index_of(sass::Family::gmma)] = static_gmma;
  ev.check.sass = sass::StaticReport{"", {arch}};
  ev.dynamic = DynamicReport{};
  ev.dynamic->raw = std::move(raw);
  return ev;
}

suite::Problem two_gflop_problem() {
  suite::Problem problem;
  problem.flops = 2'000'000'000;
  return problem;
}

TEST(DynamicReport, OnlyTheCandidatesOwnKernelsAreCredited) {
  // cuBLAS's GMMA ran in the call; the candidate's own kernel has none.
  Evaluation ev = gemm_evaluation(counts({{kGemm, 0.0}, {kCublas, 4096.0}}), 0, {kGemm, kCublas});
  derive_dynamic(ev, two_gflop_problem());
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::absent);
  EXPECT_EQ(ev.dynamic->foreign_ranges, 1);
  EXPECT_DOUBLE_EQ(ev.dynamic->tensor_flops, 1e9); // the own range's only
  EXPECT_DOUBLE_EQ(ev.dynamic->coverage, 0.5);
}

TEST(DynamicReport, RangesAreMatchedToKernelsByLaunchOrder) {
  // The second launch is the candidate's GEMM; the first and third are its own small kernels.
  Evaluation ev = gemm_evaluation(counts({{kInit, 0.0}, {kGemm, 512.0}}), 12, {kInit, kGemm});
  sass::ArchReport& arch = ev.check.sass->arches[0];
  arch.functions.push_back({kInit, kInit + "(demangled)", 0, {}, {}});
  derive_dynamic(ev, two_gflop_problem());
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::present);
  EXPECT_EQ(ev.dynamic->families[0].executed, 512.0);
  EXPECT_EQ(ev.dynamic->foreign_ranges, 0);
  // A counting pass that launched another number of kernels cannot be matched.
  Evaluation other = gemm_evaluation(counts({{kGemm, 512.0}}), 12, {kInit, kGemm});
  derive_dynamic(other, two_gflop_problem());
  EXPECT_EQ(other.dynamic->verdict, DynamicState::unknown);
  EXPECT_NE(other.dynamic->reason.find("launched 1 kernel(s), the correctness calls 2"),
            std::string::npos)
      << other.dynamic->reason;
}

// The paper's undefined behaviour (§A.2): a use after cudaFreeAsync can compute the right result,
// so without a memcheck pass a candidate that freed stream-ordered memory keeps its verdict but
// not its executed targets; a clean memcheck pass gives them back.
TEST(DynamicReport, AStreamOrderedFreeWithoutMemcheckLeavesTheTargetsUnknown) {
  Evaluation ev = gemm_evaluation(counts({{kGemm, 512.0}}), 12);
  ev.launches.stream_ordered_frees = 2;
  derive_dynamic(ev, two_gflop_problem());
  ASSERT_EQ(ev.dynamic->verdict, DynamicState::present);
  mark_undefined_behaviour(ev);
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::unknown);
  EXPECT_NE(ev.dynamic->reason.find("2 cudaFreeAsync"), std::string::npos) << ev.dynamic->reason;
  EXPECT_EQ(ev.dynamic->families[0].executed, 512.0); // the counts stay, unclassified

  Evaluation checked = gemm_evaluation(counts({{kGemm, 512.0}}), 12);
  checked.launches.stream_ordered_frees = 2;
  checked.sanitizer = SanitizerPass{};
  checked.sanitizer->ran = true; // clean: no stream-ordered race
  derive_dynamic(checked, two_gflop_problem());
  mark_undefined_behaviour(checked);
  EXPECT_EQ(checked.dynamic->verdict, DynamicState::present);

  Evaluation skipped = gemm_evaluation(counts({{kGemm, 512.0}}), 12);
  skipped.launches.stream_ordered_frees = 1;
  skipped.sanitizer = SanitizerPass{}; // asked for, but compute-sanitizer did not run
  skipped.sanitizer->reason = "compute-sanitizer not found";
  derive_dynamic(skipped, two_gflop_problem());
  mark_undefined_behaviour(skipped);
  EXPECT_EQ(skipped.dynamic->verdict, DynamicState::unknown);
}

TEST(LaunchRules, ACountingPassThatLaunchesAnotherNumberOfKernelsIsInconsistentWork) {
  const auto own = own_functions({kGemm});
  LaunchEvidence e = honest({kGemm});
  e.counted_launches = 0; // the repeat on input set 0 launched nothing
  const auto broken = judge_launches(e, &own);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("counting pass"), std::string::npos) << broken->message;
  // CUPTI's running range number (2 here: the session's warm-up took 1) is not an index.
  EXPECT_EQ(range_kernel("2", 0, {kGemm}), kGemm);
  EXPECT_EQ(range_kernel("3", 1, {kGemm}), "");
  EXPECT_EQ(range_kernel(kGemm, 5, {}), kGemm);
}

TEST(DynamicReport, NullOrNaNCountsAreUnknownWithAReasonNotAnException) {
  // Today's child sent a NaN as null; the new one sends "NaN". Neither may throw.
  for (const trace::Json& bad : {trace::Json(nullptr), trace::Json("NaN"), trace::Json("lots")}) {
    Evaluation ev = gemm_evaluation(counts({{kGemm, bad}}), 12);
    ASSERT_NO_THROW(derive_dynamic(ev, two_gflop_problem()));
    EXPECT_EQ(ev.dynamic->verdict, DynamicState::unknown) << bad.dump();
    EXPECT_NE(ev.dynamic->reason.find(kGmmaMetric), std::string::npos) << ev.dynamic->reason;
  }
  // Counts that are not even an object, or totals with null (the old reply shape).
  for (const trace::Json& raw :
       {trace::Json(7), trace::Json{{"available", true}, {"gmma", nullptr}},
        trace::Json{{"available", "yes"}}, trace::Json{{"available", true}, {"metrics", 3}}}) {
    Evaluation ev = gemm_evaluation(raw, 12);
    ASSERT_NO_THROW(derive_dynamic(ev, two_gflop_problem())) << raw.dump();
  }
}

TEST(DynamicReport, AWrongTypedCountsFieldIsUnknownWithItsPathAsTheReason) {
  trace::Json raw = counts({{kGemm, 512.0}});
  raw["ranges"][0]["kernel"] = 2;
  auto read = read_counts(raw);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(read.error().message,
            "instruction counts: $.ranges[0].kernel: expected a string, got integer");
  Evaluation ev = gemm_evaluation(raw, 12);
  derive_dynamic(ev, two_gflop_problem());
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::unknown);
  EXPECT_EQ(ev.dynamic->reason, read.error().message);
  auto available = read_counts(trace::Json{{"available", "yes"}});
  ASSERT_FALSE(available);
  EXPECT_NE(available.error().message.find("$.available: expected a boolean, got string"),
            std::string::npos);
}

// A B200's counts (the sm_100a rows, which have never run on a GPU) are credited with no code of
// their own: TCGEN05 executed = the sum of its rows' metrics, the coverage from utchmma's FLOPs.
TEST(DynamicReport, ABlackwellCandidatesTcgen05IsCreditedFromTheSm100aRows) {
  const sass::ArchCounters& table = *sass::counters_for("sm_100a");
  trace::Json values = trace::Json::object();
  for (const sass::CounterRow& row : table.rows)
    values[std::string(row.metric)] = 0.0;
  values["smsp__sass_inst_executed_op_utcmma.sum"] = 64.0;
  values["smsp__sass_inst_executed_op_tmem_ldt.sum"] = 32.0;
  values[std::string(table.flop_metric)] = 1e9;
  const trace::Json raw{{"available", true},
                        {"arch", "sm_100a"},
                        {"metrics", values},
                        {"ranges", trace::Json::array({{{"kernel", "1"}, {"metrics", values}}})}};
  Evaluation ev = gemm_evaluation(raw, 12);
  ev.check.arch = compile::Arch::sm_100a;
  ev.check.sass->arches[0].arch = "sm_100a";
  ev.check.sass->arches[0].target_families = sass::target_families_for("sm_100a");
  ev.check.sass->arches[0].totals[sass::index_of(sass::Family::tcgen05)] = 5;
  derive_dynamic(ev, two_gflop_problem());
  ASSERT_EQ(ev.dynamic->families.size(), 1u) << ev.dynamic->reason;
  EXPECT_EQ(ev.dynamic->families[0].family, sass::Family::tcgen05);
  EXPECT_EQ(ev.dynamic->families[0].executed, 96.0);
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::present) << ev.dynamic->reason;
  EXPECT_DOUBLE_EQ(ev.dynamic->coverage, 0.5);
  // Hopper's counts on a Blackwell candidate name no TCGEN05 metric: unknown, saying which.
  Evaluation hopper = gemm_evaluation(counts({{kGemm, 512.0}}), 12);
  hopper.check.arch = compile::Arch::sm_100a;
  hopper.check.sass->arches[0].arch = "sm_100a";
  derive_dynamic(hopper, two_gflop_problem());
  EXPECT_EQ(hopper.dynamic->verdict, DynamicState::unknown);
  EXPECT_NE(hopper.dynamic->reason.find("smsp__sass_inst_executed_op_utcmma.sum"),
            std::string::npos)
      << hopper.dynamic->reason;
}

} // namespace
