// `ptxbench run` on the H200 (label gpu): the real binary, a replay model, the local GPU
// evaluator. A candidate that behaves differently on its second call used to end the whole run
// with an exception; every evaluated turn is memory-checked by default; a Triton run's turns
// are evaluated on the GPU as CUDA ones are.
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace ptxbench;
using test_support::cache_env;
using test_support::ScratchDir;

namespace {

std::string kernel_text(const std::string& name, int variant = 0) {
  auto text = util::read_file(std::string(PTXBENCH_TEST_KERNELS) + "/" + name);
  EXPECT_TRUE(text) << text.error().message;
  return (variant == 0 ? "" : "#define PTXBENCH_VARIANT " + std::to_string(variant) + "\n") +
         (text ? *text : std::string());
}

// A registry with one replay model answering `replies` in order, each in a `fence` block.
std::filesystem::path replay_registry(const ScratchDir& dir,
                                      const std::vector<std::string>& replies,
                                      const std::string& fence = "```cuda") {
  std::string lines;
  for (const std::string& reply : replies)
    lines += nlohmann::json{{"text", fence + "\n" + reply + "```\n"}}.dump() + "\n";
  EXPECT_TRUE(util::write_file_atomic(dir.path() / "replies.jsonl", lines));
  const nlohmann::json model{
      {"provider", "replay"}, {"model", "replay"}, {"replay_file", "replies.jsonl"}};
  const auto path = dir.path() / "models.json";
  EXPECT_TRUE(
      util::write_file_atomic(path, nlohmann::json{{"models", {{"scripted", model}}}}.dump()));
  return path;
}

// The rows of turns.csv as column name → value.
std::vector<std::map<std::string, std::string>> turns_csv(const std::filesystem::path& run_dir) {
  auto text = util::read_file(run_dir / "exports" / "turns.csv");
  EXPECT_TRUE(text) << (text ? "" : text.error().message);
  std::istringstream in(text ? *text : std::string());
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  auto split = [](const std::string& l) {
    std::vector<std::string> cells;
    std::stringstream cell(l);
    for (std::string c; std::getline(cell, c, ',');)
      cells.push_back(c);
    if (!l.empty() && l.back() == ',')
      cells.emplace_back();
    return cells;
  };
  while (std::getline(in, line)) {
    if (header.empty()) {
      header = split(line);
      continue;
    }
    const auto cells = split(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i)
      row[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

TEST(RunGpu, ACandidateThatSkipsARepeatedCallGetsAVerdictAndEveryTrajectoryFinishes) {
  ScratchDir dir, cache;
  const auto registry = replay_registry(
      dir, {kernel_text("gemm_bad_variants.cu", 12), kernel_text("sm90_wgmma_tma_gemm.cu")});
  const auto run_dir = dir.path() / "run";
  auto result = test_support::run_ptxbench(
      {"run", "--registry", registry.string(), "--model", "scripted", "--trajectories", "2",
       "--turns", "2", "--jobs", "1", "--no-memcheck", "--quiet", "--out", run_dir.string()},
      std::chrono::minutes(10), {cache_env(cache)});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  EXPECT_NE(result->out.find("2 of 2 trajectories finished"), std::string::npos) << result->out;
  const auto rows = turns_csv(run_dir);
  ASSERT_EQ(rows.size(), 4u);
  for (std::size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(rows[i].at("category"), i % 2 == 0 ? "numerical" : "correct") << i;
}

TEST(RunGpu, EveryEvaluatedTurnIsMemoryCheckedByDefault) {
  ScratchDir dir, cache;
  const auto run_dir = dir.path() / "run";
  auto result = test_support::run_ptxbench(
      {"run", "--model", "demo", "--turns", "3", "--quiet", "--out", run_dir.string()},
      std::chrono::minutes(10), {cache_env(cache)});
  ASSERT_TRUE(result) << result.error().message;
  const auto rows = turns_csv(run_dir);
  ASSERT_EQ(rows.size(), 3u) << result->out << result->err;
  EXPECT_EQ(rows[0].at("category"), "compile");
  EXPECT_EQ(rows[0].at("memcheck_ms"), ""); // nothing was built, nothing checked
  for (std::size_t i = 1; i < rows.size(); ++i) {
    ASSERT_FALSE(rows[i].at("memcheck_ms").empty()) << i;
    EXPECT_GT(std::stod(rows[i].at("memcheck_ms")), 0.0) << i;
  }
  EXPECT_EQ(rows[2].at("category"), "correct");
}

TEST(RunGpu, ATritonRunEvaluatesEachReplyOnTheGpu) {
  ScratchDir dir, cache;
  auto triton_text = [](const std::string& path) {
    auto text = util::read_file(path);
    EXPECT_TRUE(text) << path;
    return text ? *text : std::string();
  };
  const auto registry = replay_registry(
      dir,
      {triton_text(std::string(PTXBENCH_TEST_KERNELS) + "/triton/torch_op.py"),
       triton_text(std::string(PTXBENCH_TEST_DATA) + "/compile/triton/gemm_persistent_tma.py")},
      "```python");
  const auto run_dir = dir.path() / "run";
  auto result = test_support::run_ptxbench({"run", "--registry", registry.string(), "--model",
                                            "scripted", "--language", "triton", "--turns", "2",
                                            "--target-speedup", "0.5", "--out", run_dir.string()},
                                           std::chrono::minutes(10), {cache_env(cache)});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  EXPECT_EQ(result->err.find("static_only"), std::string::npos) << result->err;
  const auto rows = turns_csv(run_dir);
  ASSERT_EQ(rows.size(), 2u) << result->out << result->err;
  EXPECT_EQ(rows[0].at("category"), "banned_library"); // torch.matmul ran cuBLAS in the call
  EXPECT_EQ(rows[1].at("category"), "correct");
  ASSERT_FALSE(rows[1].at("speedup").empty());
  EXPECT_GT(std::stod(rows[1].at("speedup")), 0.5);
  EXPECT_EQ(rows[1].at("language"), "triton");
}

} // namespace
