#include "agent/runner.hpp"

#include "agent/remote_executor.hpp"
#include "store/enums.hpp"

#include <exception>
#include <fmt/core.h>
#include <map>
#include <thread>
#include <tuple>

namespace ptxbench::agent {
namespace {

using PromptKey = std::tuple<std::string, std::string, bool>; // (problem, variant, guidance)

util::Status check_models(const RunPlan& plan, const model::ModelRegistry& registry) {
  for (const std::string& name : plan.models)
    if (registry.find(name) == nullptr)
      return util::make_error(util::ErrorKind::not_found, "model \"" + name +
                                                              "\" is not in the registry " +
                                                              registry.origin.string());
  return util::Ok{};
}

util::Expected<std::map<PromptKey, Prompts>>
build_all_prompts(const std::vector<PlannedTrajectory>& planned, const RunPlan& plan,
                  const pack::Manifest& manifest, const RunDeps& deps) {
  std::map<PromptKey, Prompts> prompts;
  for (const auto& item : planned) {
    PromptKey key{item.problem->name(), item.variant, item.guidance};
    if (prompts.contains(key))
      continue;
    if (item.guidance && deps.guidance.empty())
      throw util::Fatal("run_plan: the plan gives guidance but RunDeps::guidance is empty");
    PTXBENCH_TRY_ASSIGN(auto built,
                        build_prompts(*item.problem, plan.loop.arch, manifest, item.variant,
                                      deps.live_device, frontend::of(plan.loop.language),
                                      item.guidance ? deps.guidance : ""));
    prompts.emplace(std::move(key), std::move(built));
  }
  return prompts;
}

// The first user message of each repair trajectory (empty for the others), in the plan's
// candidate language: the Fixit prompt, or its Triton parallel.
util::Expected<std::vector<std::string>> repair_tasks(const std::vector<PlannedTrajectory>& planned,
                                                      const RunPlan& plan) {
  std::vector<std::string> tasks(planned.size());
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const PlannedTrajectory& item = planned[i];
    if (item.repair == nullptr)
      continue;
    PTXBENCH_TRY_ASSIGN(auto prompt, repair_prompt(frontend::of(plan.loop.language), *item.problem,
                                                   item.repair->kernel, item.repair->error));
    tasks[i] = std::move(prompt);
  }
  return tasks;
}

// Counted turns every trajectory may still take, from what the store already holds.
util::Expected<std::int64_t> remaining_budget(const std::vector<PlannedTrajectory>& planned,
                                              const RunPlan& plan, store::RunStore& store) {
  std::int64_t budget = 0;
  for (const auto& item : planned) {
    budget += plan.loop.max_turns;
    PTXBENCH_TRY_ASSIGN(auto record, store.find_trajectory(item.key));
    if (!record)
      continue;
    PTXBENCH_TRY_ASSIGN(auto point, store.resume_point(record->id));
    budget -= std::min<std::int64_t>(point.counted_turns, plan.loop.max_turns);
  }
  return budget;
}

class Workers {
public:
  Workers(const RunPlan& plan, const RunDeps& deps, const std::vector<PlannedTrajectory>& planned,
          const std::map<PromptKey, Prompts>& prompts, const std::vector<std::string>& repairs,
          Progress& progress)
      : m_plan(plan), m_deps(deps), m_planned(planned), m_prompts(prompts), m_repairs(repairs),
        m_progress(progress), m_outcomes(planned.size()) {}

  std::vector<TrajectoryOutcome> run() {
    std::vector<std::thread> threads;
    int count = std::max(1, std::min<int>(m_plan.jobs, static_cast<int>(m_planned.size())));
    for (int i = 0; i < count; ++i)
      threads.emplace_back([this] { work(); });
    for (auto& thread : threads)
      thread.join();
    if (m_failure)
      std::rethrow_exception(m_failure);
    return std::move(m_outcomes);
  }

private:
  void work() {
    for (std::size_t i = m_next++; i < m_planned.size(); i = m_next++) {
      if (m_failure_seen.load())
        return;
      try {
        m_outcomes[i] = run_one(m_planned[i], m_repairs[i]);
      } catch (...) {
        std::lock_guard lock(m_mutex);
        if (!m_failure)
          m_failure = std::current_exception();
        m_failure_seen = true;
      }
    }
  }

  TrajectoryOutcome run_one(const PlannedTrajectory& item, const std::string& repair_task) {
    const model::ModelSpec* model = m_deps.registry->find(item.key.model);
    TrajectoryTask task{item.key, item.problem, model,
                        m_prompts.at({item.problem->name(), item.variant, item.guidance}),
                        item.condition.retrieval};
    if (item.repair != nullptr)
      task.prompts.task = repair_task;
    LoopDeps loop_deps;
    loop_deps.store = m_deps.store;
    loop_deps.executor = m_deps.executor;
    loop_deps.cancel = m_deps.cancel;
    loop_deps.extra_feedback = m_deps.extra_feedback;
    loop_deps.on_turn = [this](const TurnEvent& event) { m_progress.on_turn(event); };
    loop_deps.on_notice = [this](const store::TrajectoryKey& key, const std::string& text) {
      m_progress.notice(key, text);
    };
    loop_deps.on_activity = [this](const store::TrajectoryKey& key, Activity activity, Edge edge) {
      m_progress.on_activity(key, activity, edge);
    };
    loop_deps.make_client = [this, model](std::int64_t calls_made) {
      model::ClientDeps client = m_deps.client;
      client.replay_start = static_cast<std::size_t>(calls_made);
      return model::make_client(*model, client);
    };
    TrajectoryOutcome outcome{item.key, std::nullopt, std::nullopt};
    auto result = run_trajectory(task, m_plan.loop, loop_deps);
    if (!result) {
      outcome.error = result.error();
      m_progress.on_trajectory_end(TrajectoryResult{}, m_plan.loop.max_turns);
      return outcome;
    }
    m_progress.on_trajectory_end(*result, m_plan.loop.max_turns);
    outcome.result = std::move(*result);
    return outcome;
  }

  const RunPlan& m_plan;
  const RunDeps& m_deps;
  const std::vector<PlannedTrajectory>& m_planned;
  const std::map<PromptKey, Prompts>& m_prompts;
  const std::vector<std::string>& m_repairs; // per planned trajectory
  Progress& m_progress;
  std::vector<TrajectoryOutcome> m_outcomes;
  std::atomic<std::size_t> m_next{0};
  std::atomic<bool> m_failure_seen{false};
  std::mutex m_mutex;
  std::exception_ptr m_failure;
};

} // namespace

std::int64_t RunSummary::finished() const {
  return std::ranges::count_if(trajectories, [](const TrajectoryOutcome& t) {
    return t.result && t.result->exit.has_value();
  });
}

std::int64_t RunSummary::unfinished() const {
  return static_cast<std::int64_t>(trajectories.size()) - finished();
}

util::Status check_plan(const RunPlan& plan, const suite::Suite& suite,
                        const pack::Manifest& manifest, const model::ModelRegistry& registry) {
  PTXBENCH_TRY(check_models(plan, registry));
  PTXBENCH_TRY(expand(plan, suite, manifest));
  return util::Ok{};
}

util::Expected<RunSummary> run_plan(const RunPlan& plan, const RunDeps& deps) {
  if (deps.store == nullptr || deps.executor == nullptr || deps.suite == nullptr ||
      deps.manifest == nullptr || deps.registry == nullptr)
    throw util::Fatal("run_plan: missing store, executor, suite, manifest or registry");
  PTXBENCH_TRY(check_models(plan, *deps.registry));
  PTXBENCH_TRY_ASSIGN(auto planned, expand(plan, *deps.suite, *deps.manifest));
  PTXBENCH_TRY_ASSIGN(auto prompts, build_all_prompts(planned, plan, *deps.manifest, deps));
  PTXBENCH_TRY_ASSIGN(auto repairs, repair_tasks(planned, plan));
  PTXBENCH_TRY_ASSIGN(auto budget, remaining_budget(planned, plan, *deps.store));
  Progress progress(static_cast<std::int64_t>(planned.size()), budget, deps.progress_out,
                    deps.display, deps.notice_out);
  progress.watch(deps.cancel);
  RunSummary summary;
  summary.trajectories = Workers(plan, deps, planned, prompts, repairs, progress).run();
  progress.finish();
  summary.counts = progress.counts();
  return summary;
}

std::string render_summary(const RunSummary& summary) {
  std::string out;
  for (const auto& t : summary.trajectories) {
    out += trajectory_label(t.key) + ": ";
    if (t.error) {
      out += "FAILED: " + t.error->message + "\n";
      continue;
    }
    const TrajectoryResult& r = *t.result;
    out += r.exit ? std::string(store::enum_name(store::kExitReasons, *r.exit)) : "stopped";
    out += fmt::format(", {} counted turns, {} correct", r.counted_turns, r.correct_turns);
    if (r.best_speedup)
      out += fmt::format(", best speedup {:.3f}x", *r.best_speedup);
    if (!r.stop_reason.empty())
      out += " (" + r.stop_reason + ")";
    out += "\n";
  }
  out += fmt::format("{} of {} trajectories finished; {} turns this run, {} correct.\n",
                     summary.finished(), summary.trajectories.size(), summary.counts.turns,
                     summary.counts.correct);
  if (summary.unfinished() > 0)
    out += "Unfinished trajectories continue with `ptxbench run --resume DIR`.\n";
  return out;
}

} // namespace ptxbench::agent
