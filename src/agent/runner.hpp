// A whole run: every trajectory of a plan, several at once, into one run store.
//
// Problem. A benchmark run is hundreds of trajectories whose time goes to three different
// resources — the model API (seconds to minutes per call), nvcc (seconds, CPU), the GPU
// (seconds, one evaluation at a time per GPU). Run one trajectory at a time and the GPU idles
// while the model thinks.
//
// Approach. `jobs` worker threads take trajectories from the plan in order; each runs the
// whole turn loop (loop.hpp) for its trajectory. While one worker waits for its model, another
// compiles and a third holds the GPU: the executor takes the GPU's lock only for the GPU part
// (executor.hpp), so compiles and model calls overlap evaluations. The prompts of each
// (problem, variant) are built once. Resume is the same call on an existing store: finished
// trajectories are skipped, the others continue from their last finished turn.
//
// Invariants: one writer per trajectory (each trajectory belongs to one worker); a trajectory's
// failure (store error, client that cannot be made) is reported with its key and does not stop
// the others; a bug (exception) stops the run after the workers have joined.
#pragma once

#include "agent/loop.hpp"
#include "agent/plan.hpp"
#include "agent/progress.hpp"
#include "model/factory.hpp"
#include "model/registry.hpp"

#include <atomic>
#include <string>
#include <vector>

namespace ptxbench::agent {

struct RunDeps {
  store::RunStore* store = nullptr;
  Executor* executor = nullptr; // thread-safe
  const suite::Suite* suite = nullptr;
  const pack::Manifest* manifest = nullptr;
  const model::ModelRegistry* registry = nullptr;
  model::ClientDeps client; // HTTP transport and retry settings
  std::string live_device;  // the evaluating GPU's live parameters for the prompts, or empty
  // The text of the plan's guidance file (guidance.hpp), for the trajectories whose condition
  // gives it; empty when the plan has none. run_plan refuses a plan with guidance but no text.
  std::string guidance;
  std::FILE* progress_out = nullptr; // null: no progress display
  std::FILE* notice_out = nullptr;   // the loop's notices (evaluator retries); null: progress_out
  Display display = Display::lines;
  const std::atomic<bool>* cancel = nullptr; // optional
  FeedbackHook extra_feedback;               // optional (loop.hpp); thread-safe
};

struct TrajectoryOutcome {
  store::TrajectoryKey key;
  std::optional<TrajectoryResult> result;
  std::optional<util::Error> error; // the trajectory could not run (store, client)
};

struct RunSummary {
  std::vector<TrajectoryOutcome> trajectories; // plan order
  ProgressCounts counts;
  std::int64_t finished() const;   // trajectories that reached an exit reason
  std::int64_t unfinished() const; // stopped (cancelled, infra) or failed: resumable
};

// not_found when the plan names a model that is not in the registry, or a problem, suite or
// prompt variant that does not exist; run_plan checks the same before anything runs.
util::Status check_plan(const RunPlan& plan, const suite::Suite& suite,
                        const pack::Manifest& manifest, const model::ModelRegistry& registry);

// Errors before anything runs: a plan naming an unknown model, problem or variant.
util::Expected<RunSummary> run_plan(const RunPlan& plan, const RunDeps& deps);

// One line per trajectory and the totals, for the end of `ptxbench run`.
std::string render_summary(const RunSummary& summary);

} // namespace ptxbench::agent
