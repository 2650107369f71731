#include "agent/turn_prompt.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace ptxbench::agent {
namespace {

util::Expected<store::TrajectoryRecord> find_record(store::RunStore& store,
                                                    store::TrajectoryId id) {
  PTXBENCH_TRY_ASSIGN(auto all, store.trajectories());
  for (auto& record : all)
    if (record.id == id)
      return std::move(record);
  return util::make_error(
      util::ErrorKind::not_found,
      fmt::format("the run has no trajectory {} (it has {})", id.value,
                  all.empty() ? std::string("none") : fmt::format("1 to {}", all.back().id.value)));
}

} // namespace

util::Expected<TurnPrompt> turn_prompt(store::RunStore& store, store::TrajectoryId trajectory,
                                       std::int64_t turn, ContextPolicy policy) {
  PTXBENCH_TRY_ASSIGN(auto record, find_record(store, trajectory));
  PTXBENCH_TRY_ASSIGN(auto prompts, store.prompts(trajectory));
  if (!prompts)
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("trajectory {} has no stored prompts", trajectory.value));
  PTXBENCH_TRY_ASSIGN(auto turns, store.finished_turns(trajectory));
  if (std::ranges::none_of(turns, [&](const auto& t) { return t.index == turn; }))
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("trajectory {} has no finished turn {} ({} finished)",
                                        trajectory.value, turn + 1, turns.size()));
  std::erase_if(turns, [&](const store::FinishedTurn& t) { return t.index >= turn; });
  TurnPrompt out{std::move(record), turn, conversation(*prompts, turns, policy), {}};
  const std::size_t shown = (out.messages.size() - 2) / 2; // feedback messages in the prompt
  std::vector<const store::FinishedTurn*> pairs;
  for (const auto& t : turns)
    if (t.category != store::TurnCategory::infra && t.reply && t.feedback)
      pairs.push_back(&t);
  for (std::size_t i = pairs.size() - std::min(shown, pairs.size()); i < pairs.size(); ++i)
    if (pairs[i]->retrieval_json)
      out.retrievals.push_back({pairs[i]->index, *pairs[i]->retrieval_json});
  return out;
}

} // namespace ptxbench::agent
