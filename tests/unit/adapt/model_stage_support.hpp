// Data directories for the adaptation-stage tests: selected failures, repaired pairs and
// correct kernels written as the earlier stages write them, a loopback model registry with
// prices, and the real suite and knowledge packs.
#pragma once

#include "adapt/jsonl.hpp"
#include "adapt/records.hpp"
#include "support/loopback_server.hpp"
#include "support/real_data.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

namespace ptxbench::adapt::testing {

using test_support::real_manifest;
using test_support::real_suite;
using test_support::ScratchDir;

inline FailureRecord failure(int n, std::string category = "compile") {
  FailureRecord f;
  f.kernel_source = "// wrong kernel " + std::to_string(n) + "\n__global__ void k() {}\n";
  f.id = util::sha256_hex(f.kernel_source);
  f.run_dir = "/runs/source";
  f.trajectory_key = {"student", "gemm_n7168_k5120", "none", n};
  f.turn = 1;
  f.arch = "sm_90a";
  f.category = std::move(category);
  f.feedback = "error " + std::to_string(n) + ": identifier \"wgmma\" is undefined";
  f.system_prompt = "SYSTEM PROMPT";
  f.task_prompt = "TASK PROMPT";
  return f;
}

inline PairRecord pair(int n) {
  PairRecord p;
  p.failure = failure(n);
  p.repaired_kernel = "// repaired kernel MARK-" + std::to_string(n) + "\n";
  p.id = util::sha256_hex(p.failure.id + util::sha256_hex(p.repaired_kernel));
  p.repair_run_dir = "/data/fixit/repair/run";
  p.repair_trajectory_key = {"teacher", "gemm_n7168_k5120", "none", n};
  p.repair_turn = 0;
  p.speedup = 0.2;
  p.target_executed = true;
  p.teacher_model = "teacher";
  return p;
}

inline CorrectRecord correct(int n) {
  CorrectRecord c;
  c.kernel_source = "// correct kernel MARK-" + std::to_string(n) + "\n";
  c.id = util::sha256_hex(c.kernel_source);
  c.run_dir = "/runs/source";
  c.trajectory_key = {"student", "gemm_n7168_k5120", "gemm-0", n};
  c.turn = 2;
  c.arch = "sm_90a";
  c.reply = "Here it is.\n```cuda\n" + c.kernel_source + "```\n";
  c.speedup = 1.1;
  c.system_prompt = "SYSTEM PROMPT";
  c.task_prompt = "TASK PROMPT";
  return c;
}

// The MARK-<n> of the kernel a request shows (the records above mark their kernels so).
inline int mark_of(const httplib::Request& request) {
  const std::string user = nlohmann::json::parse(request.body)["messages"][1]["content"];
  std::smatch match;
  std::regex_search(user, match, std::regex("MARK-(\\d+)"));
  return std::stoi(match[1].str());
}

template <class Record>
void write_records(const std::filesystem::path& path, const std::vector<Record>& records) {
  std::vector<Json> lines;
  for (const auto& record : records)
    lines.push_back(to_json(record));
  ASSERT_TRUE(util::write_file_atomic(path, to_jsonl(lines)));
}

// A registry naming one OpenAI-compatible model "loop" at `base_url`, priced at $1/M input and
// $2/M output tokens, with `max_attempts` HTTP attempts a call.
inline std::filesystem::path
write_priced_registry(const ScratchDir& dir, const std::string& base_url, int max_attempts = 1) {
  auto path = dir.path() / "models.json";
  const nlohmann::json model{{"provider", "openai"},
                             {"base_url", base_url + "/v1"},
                             {"model", "m"},
                             {"temperature", 1.0},
                             {"max_attempts", max_attempts},
                             {"price_per_mtok", {{"input", 1.0}, {"output", 2.0}}}};
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"loop", model}}}}.dump()));
  return path;
}

inline std::vector<Json> read_lines(const std::filesystem::path& path) {
  auto lines = read_jsonl_lines(path);
  EXPECT_TRUE(lines) << lines.error().message;
  std::vector<Json> out;
  if (lines)
    for (JsonlLine& line : *lines)
      out.push_back(std::move(line.json));
  return out;
}

} // namespace ptxbench::adapt::testing
