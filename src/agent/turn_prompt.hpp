// What the model saw at one turn, rebuilt from the run store: the loop builds every model call's
// messages from the trajectory's stored opening prompts and its finished turns (loop.hpp,
// conversation), so the same function over the turns before turn N gives turn N's messages
// exactly — the guidance (in the system prompt), the retrieved notes (in earlier feedback) and
// all. With them come the retrieval records of the feedback those messages hold.
#pragma once

#include "agent/loop.hpp"
#include "model/chat.hpp"
#include "store/run_store.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::agent {

struct ShownRetrieval {
  std::int64_t turn = 0;   // the store's 0-based index of the turn whose feedback holds it
  std::string record_json; // store::TurnOutcome::retrieval_json
};

struct TurnPrompt {
  store::TrajectoryRecord trajectory;
  std::int64_t turn = 0; // the store's 0-based index
  std::vector<model::Message> messages;
  std::vector<ShownRetrieval> retrievals;
};

// not_found for an unknown trajectory id, a trajectory without stored prompts, or a turn index
// the trajectory has not finished.
util::Expected<TurnPrompt> turn_prompt(store::RunStore& store, store::TrajectoryId trajectory,
                                       std::int64_t turn, ContextPolicy policy);

} // namespace ptxbench::agent
