#include "trace/trace_set.hpp"
#include "trace_test_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::trace;
using trace::testing::fixture;
using trace::testing::read_fixture;
using trace::testing::ScratchDir;
namespace fs = std::filesystem;

namespace {

fs::path copy_fixture_tree(const ScratchDir& scratch) {
  fs::path root = scratch.path() / "set";
  fs::copy(fixture("set"), root, fs::copy_options::recursive);
  return root;
}

bool mentions(const std::vector<util::Error>& problems, const std::string& text) {
  for (const util::Error& problem : problems)
    if (problem.message.find(text) != std::string::npos)
      return true;
  return false;
}

std::string all_messages(const std::vector<util::Error>& problems) {
  std::string text;
  for (const util::Error& problem : problems)
    text += problem.message + "\n";
  return text;
}

} // namespace

TEST(TraceSet, LoadsTheFixtureTreeAndFindsObjectsByName) {
  auto set = TraceSet::load(fixture("set"));
  ASSERT_TRUE(set) << set.error().message;
  EXPECT_EQ(set->definitions().size(), 2u);
  EXPECT_EQ(set->solutions().size(), 2u);
  EXPECT_EQ(set->workloads().size(), 3u);
  EXPECT_EQ(set->traces().size(), 3u);
  ASSERT_NE(set->find_definition("gemm_n8_k8"), nullptr);
  EXPECT_EQ(set->find_definition("gemm_n8_k8")->op_type, "gemm");
  EXPECT_EQ(set->find_solution("py_sol")->author, "bob");
  EXPECT_EQ(set->find_definition("nope"), nullptr);
  EXPECT_EQ(set->workloads_for("gemm_n8_k8").size(), 3u);
  EXPECT_EQ(set->traces_for("gemm_n8_k8").size(), 3u);
  EXPECT_EQ(set->solutions_for("rms").size(), 1u);
  EXPECT_NE(set->find_workload("gemm_n8_k8", "uuid-2"), nullptr);
  EXPECT_TRUE(set->validate().empty()) << all_messages(set->validate());
}

TEST(TraceSet, RelativeBlobPathsResolveAgainstTheRootAndAbsoluteOnesAreKept) {
  auto set = TraceSet::load(fixture("set"));
  ASSERT_TRUE(set);
  const Trace* workload = set->find_workload("gemm_n8_k8", "uuid-2");
  const auto& blob = std::get<SafetensorsInput>(workload->workload.inputs[0].second);
  EXPECT_EQ(set->resolve_blob(blob),
            fixture("set") / "blob/workloads/gemm/gemm_n8_k8/gemm_n8_k8_0123.safetensors");
  EXPECT_EQ(set->resolve_blob(SafetensorsInput{"/abs/x.safetensors", "k"}),
            fs::path("/abs/x.safetensors"));
}

TEST(TraceSet, MissingRootIsNotFound) {
  auto set = TraceSet::load("/nonexistent/ptxbench/set");
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().kind, util::ErrorKind::not_found);
}

TEST(TraceSet, DuplicateDefinitionNamesAreRejectedNamingBothFiles) {
  ScratchDir scratch;
  fs::path root = copy_fixture_tree(scratch);
  fs::create_directories(root / "definitions/other");
  fs::copy_file(root / "definitions/gemm/gemm_n8_k8.json", root / "definitions/other/copy.json");
  auto set = TraceSet::load(root);
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().message.find("duplicate definition name \"gemm_n8_k8\""),
            std::string::npos);
  EXPECT_NE(set.error().message.find("copy.json"), std::string::npos);
}

TEST(TraceSet, DuplicateSolutionNamesAreRejected) {
  ScratchDir scratch;
  fs::path root = copy_fixture_tree(scratch);
  fs::copy_file(root / "solutions/alice/gemm/gemm_n8_k8/gemm_naive.json",
                root / "solutions/alice/gemm/gemm_n8_k8/again.json");
  auto set = TraceSet::load(root);
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().message.find("duplicate solution name \"gemm_naive\""), std::string::npos);
}

TEST(TraceSet, EvaluatedTraceInWorkloadsFolderIsALoadError) {
  ScratchDir scratch;
  fs::path root = copy_fixture_tree(scratch);
  fs::copy_file(root / "traces/alice/gemm/gemm_n8_k8.jsonl", root / "workloads/gemm/extra.jsonl");
  auto set = TraceSet::load(root);
  ASSERT_FALSE(set);
  EXPECT_NE(set.error().message.find("not a workload"), std::string::npos);
}

TEST(TraceSet, ValidateCatchesMisplacedFiles) {
  ScratchDir scratch;
  fs::path root = copy_fixture_tree(scratch);
  fs::create_directories(root / "definitions/wrong_op");
  fs::rename(root / "definitions/rmsnorm/rms.json", root / "definitions/wrong_op/rms.json");
  fs::create_directories(root / "traces/gemm");
  fs::rename(root / "traces/alice/gemm/gemm_n8_k8.jsonl", root / "traces/gemm/gemm_n8_k8.jsonl");
  auto set = TraceSet::load(root);
  ASSERT_TRUE(set) << set.error().message;
  auto problems = set->validate();
  EXPECT_EQ(problems.size(), 2u) << all_messages(problems);
  EXPECT_TRUE(mentions(problems, "definitions/wrong_op/rms.json: misplaced (wrong path component), "
                                 "expected definitions/rmsnorm/rms.json"))
      << all_messages(problems);
  EXPECT_TRUE(mentions(problems, "traces/gemm/gemm_n8_k8.jsonl: misplaced (wrong depth), expected "
                                 "traces/alice/gemm/gemm_n8_k8.jsonl"))
      << all_messages(problems);
}

TEST(TraceSet, ValidateCatchesWorkloadsThatDoNotMatchTheirDefinition) {
  ScratchDir scratch;
  fs::path root = copy_fixture_tree(scratch);
  ASSERT_TRUE(util::append_line(
      root / "workloads/gemm/gemm_n8_k8.jsonl",
      R"({"definition":"gemm_n8_k8","workload":{"axes":{"M":0},"inputs":{},"uuid":"uuid-2"}})"));
  auto set = TraceSet::load(root);
  ASSERT_TRUE(set) << set.error().message;
  auto problems = set->validate();
  EXPECT_TRUE(mentions(problems, "duplicate workload uuid \"uuid-2\"")) << all_messages(problems);
  EXPECT_TRUE(mentions(problems, "$.workload.axes.M: must be > 0")) << all_messages(problems);
}

TEST(TraceSet, AddedObjectsLandInTheirPlacesAndLoadBack) {
  ScratchDir scratch;
  auto source = TraceSet::load(fixture("set"));
  ASSERT_TRUE(source);
  TraceSet set(scratch.path());
  for (const Definition& def : source->definitions())
    ASSERT_TRUE(set.add_definition(def));
  for (const Solution& solution : source->solutions())
    ASSERT_TRUE(set.add_solution(solution));
  for (const Trace& trace : source->workloads())
    ASSERT_TRUE(set.add_workload(trace));
  for (const Trace& trace : source->traces())
    ASSERT_TRUE(set.add_trace(trace));
  EXPECT_FALSE(set.add_definition(source->definitions()[0]));
  EXPECT_EQ(*util::read_file(scratch.path() / "traces/alice/gemm/gemm_n8_k8.jsonl"),
            read_fixture("set/traces/alice/gemm/gemm_n8_k8.jsonl"));
  EXPECT_EQ(*util::read_file(scratch.path() / "solutions/alice/gemm/gemm_n8_k8/gemm_naive.json"),
            read_fixture("set/solutions/alice/gemm/gemm_n8_k8/gemm_naive.json"));
  auto reloaded = TraceSet::load(scratch.path());
  ASSERT_TRUE(reloaded) << reloaded.error().message;
  EXPECT_TRUE(reloaded->validate().empty()) << all_messages(reloaded->validate());
}

TEST(TraceSet, AddRefusesUnknownReferencesAndUnsafeNames) {
  ScratchDir scratch;
  auto source = TraceSet::load(fixture("set"));
  ASSERT_TRUE(source);
  TraceSet set(scratch.path());
  EXPECT_FALSE(set.add_solution(source->solutions()[0]));
  EXPECT_FALSE(set.add_trace(source->traces()[0]));
  Definition bad = source->definitions()[0];
  bad.name = "../escape";
  EXPECT_FALSE(set.add_definition(bad));
  EXPECT_FALSE(fs::exists(scratch.path() / "definitions"));
}
