// `ptxbench show-turn RUN TRAJECTORY TURN`: the exact messages the model got at one turn of a
// stored run (agent/turn_prompt.hpp), and the retrieval records of the notes they hold. Without
// TRAJECTORY it lists the run's trajectories with their ids.
#include "agent/plan.hpp"
#include "agent/progress.hpp"
#include "agent/turn_prompt.hpp"
#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "store/run_store.hpp"

#include <fmt/core.h>
#include <memory>
#include <nlohmann/json.hpp>

namespace ptxbench::cli {
namespace {

constexpr std::string_view kCommand = "show-turn";

struct ShowTurnOptions {
  std::string run;
  std::int64_t trajectory = 0;
  std::int64_t turn = 0; // 1-based
  bool json = false;
};

ExitCode list_trajectories(store::RunStore& store) {
  auto all = store.trajectories();
  if (!all)
    return report_error(kCommand, all.error());
  for (const auto& t : *all)
    fmt::print("{:>4}  {}\n", t.id.value, agent::trajectory_label(t.key));
  return ExitCode::ok;
}

void print_text(const agent::TurnPrompt& shown) {
  fmt::print("# Trajectory {} ({}), turn {}: {} messages\n", shown.trajectory.id.value,
             agent::trajectory_label(shown.trajectory.key), shown.turn + 1, shown.messages.size());
  for (std::size_t i = 0; i < shown.messages.size(); ++i)
    fmt::print("\n## Message {}: {}\n\n{}\n", i + 1, model::to_string(shown.messages[i].role),
               shown.messages[i].content);
  for (const auto& retrieval : shown.retrievals)
    fmt::print("\n## Retrieved with the feedback of turn {}\n\n{}\n", retrieval.turn + 1,
               nlohmann::ordered_json::parse(retrieval.record_json).dump(2));
}

void print_json(const agent::TurnPrompt& shown) {
  nlohmann::ordered_json out{{"trajectory", shown.trajectory.id.value},
                             {"key", agent::trajectory_label(shown.trajectory.key)},
                             {"condition", shown.trajectory.key.condition},
                             {"turn", shown.turn + 1}};
  out["messages"] = nlohmann::ordered_json::array();
  for (const auto& message : shown.messages)
    out["messages"].push_back(
        {{"role", model::to_string(message.role)}, {"content", message.content}});
  out["retrievals"] = nlohmann::ordered_json::array();
  for (const auto& retrieval : shown.retrievals)
    out["retrievals"].push_back({{"turn", retrieval.turn + 1},
                                 {"record", nlohmann::ordered_json::parse(retrieval.record_json)}});
  fmt::print("{}\n", out.dump(2));
}

ExitCode run_show_turn(const ShowTurnOptions& o) {
  auto store = store::RunStore::open_existing(o.run);
  if (!store)
    return report_error(kCommand, store.error());
  if (o.trajectory == 0)
    return list_trajectories(**store);
  auto plan = agent::parse_plan((*store)->info().config_json, (*store)->path());
  if (!plan)
    return report_error(kCommand, plan.error());
  if (o.turn < 1)
    return report_error(kCommand, util::Error{util::ErrorKind::invalid_input,
                                              "TURN counts from 1 (as `run --show-turns` does)"});
  auto shown = agent::turn_prompt(**store, store::TrajectoryId{o.trajectory}, o.turn - 1,
                                  plan->loop.context);
  if (!shown)
    return report_error(kCommand, shown.error());
  if (o.json)
    print_json(*shown);
  else
    print_text(*shown);
  return ExitCode::ok;
}

} // namespace

Action setup_show_turn(CLI::App& sub) {
  auto o = std::make_shared<ShowTurnOptions>();
  sub.add_option("run", o->run, "run directory")->required();
  sub.add_option("trajectory", o->trajectory,
                 "trajectory id (leave out to list the run's trajectories with their ids)");
  sub.add_option("turn", o->turn, "turn number, from 1");
  sub.add_flag("--json", o->json, "print JSON instead of text");
  return [o] {
    if (o->trajectory != 0 && o->turn == 0)
      return report_error(kCommand, util::Error{util::ErrorKind::invalid_input,
                                                "name the TURN (from 1) after the TRAJECTORY"});
    return run_show_turn(*o);
  };
}

} // namespace ptxbench::cli
