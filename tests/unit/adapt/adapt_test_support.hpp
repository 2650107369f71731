// Run stores for the adaptation tests, written through the real RunStore API (open,
// open_trajectory, set_prompts, begin_turn, record_evaluation, finish_turn), and small
// readers of the stage files.
#pragma once

#include "adapt/records.hpp"
#include "store/run_store.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::adapt::test {

struct TurnSpec {
  store::TurnCategory category = store::TurnCategory::compile;
  std::string kernel;
  std::string feedback;
  store::Counting counting = store::Counting::counted;
  std::optional<double> speedup;
  std::optional<std::string> dynamic_verdict;
};

enum class Finish : std::uint8_t { finished = 1, running = 2, open_turn = 3 };

inline std::unique_ptr<store::RunStore> open_run(const std::filesystem::path& dir,
                                                 const std::string& arch = "sm_90a") {
  auto run = store::RunStore::open(
      dir, store::RunInfo{"{\"arch\":\"" + arch + "\",\"turns\":5}", "test", ""});
  EXPECT_TRUE(run) << run.error().message;
  return std::move(*run);
}

inline store::TrajectoryKey key(const std::string& problem, std::int64_t sample = 0,
                                const std::string& variant = "hopper-07",
                                const std::string& model = "student") {
  return store::TrajectoryKey{model, problem, variant, sample};
}

inline store::TrajectoryPrompts prompts_for(const store::TrajectoryKey& k) {
  return {"SYSTEM for " + k.problem, "TASK: implement " + k.problem};
}

inline void add_turn(store::RunStore& run, store::TrajectoryId id, const TurnSpec& turn) {
  auto handle = run.begin_turn(id);
  ASSERT_TRUE(handle) << handle.error().message;
  if (!turn.kernel.empty()) {
    store::EvaluationRecord evaluation;
    evaluation.kernel_source = turn.kernel;
    evaluation.speedup = turn.speedup;
    evaluation.static_verdict =
        turn.dynamic_verdict ? std::optional<std::string>("present") : std::nullopt;
    evaluation.dynamic_verdict = turn.dynamic_verdict;
    ASSERT_TRUE(run.record_evaluation(handle->id, evaluation).has_value());
  }
  store::TurnOutcome outcome;
  outcome.category = turn.category;
  outcome.counting = turn.counting;
  outcome.reply = "I wrote this:\n```cuda\n" + turn.kernel + "\n```";
  if (!turn.kernel.empty())
    outcome.kernel_source = turn.kernel;
  outcome.feedback = turn.feedback;
  ASSERT_TRUE(run.finish_turn(handle->id, outcome).has_value());
}

inline void add_trajectory(store::RunStore& run, const store::TrajectoryKey& k,
                           const std::vector<TurnSpec>& turns, Finish finish = Finish::finished) {
  auto id = run.open_trajectory(k);
  ASSERT_TRUE(id) << id.error().message;
  ASSERT_TRUE(run.set_prompts(*id, prompts_for(k)).has_value());
  for (const TurnSpec& turn : turns)
    add_turn(run, *id, turn);
  if (finish == Finish::open_turn) {
    ASSERT_TRUE(run.begin_turn(*id).has_value());
    return;
  }
  if (finish == Finish::finished) {
    ASSERT_TRUE(run.finish_trajectory(*id, store::ExitReason::turn_budget).has_value());
  }
}

inline TurnSpec turn(store::TurnCategory category, const std::string& kernel,
                     const std::string& feedback,
                     store::Counting counting = store::Counting::counted) {
  return TurnSpec{category, kernel, feedback, counting, std::nullopt, std::nullopt};
}
inline TurnSpec failed(store::TurnCategory category, const std::string& kernel) {
  return turn(category, kernel, "feedback of " + kernel);
}
inline TurnSpec correct(const std::string& kernel, double speedup,
                        std::optional<std::string> verdict = "present") {
  return TurnSpec{store::TurnCategory::correct, kernel,  "Kernel is correct.",
                  store::Counting::counted,     speedup, std::move(verdict)};
}

inline std::string read(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  EXPECT_TRUE(text) << path;
  return text ? *text : std::string();
}

// `text` with every occurrence of `from` replaced by `to` (scratch paths out of goldens).
inline std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

} // namespace ptxbench::adapt::test
