// A replay model client over recorded reply lines written into a scratch folder, and the
// JSONL line of one recorded reply: shared by the replay provider's tests and the tests that
// carry hostile replies on to code extraction.
#pragma once

#include "model/factory.hpp"
#include "support/scratch_dir.hpp"
#include "util/error.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::test_support {

inline std::unique_ptr<model::ModelClient> replay_client(const ScratchDir& dir,
                                                         const std::string& lines) {
  model::ModelSpec spec;
  spec.name = "demo";
  spec.provider = "replay";
  spec.replay_file = dir.write("replies.jsonl", lines);
  spec.prices = model::Prices{1, 2};
  auto client = model::make_client(spec, model::ClientDeps{});
  if (!client)
    throw util::Fatal(client.error().message);
  return std::move(*client);
}

inline std::string reply_line(const nlohmann::json& value) {
  return value.dump() + "\n";
}

} // namespace ptxbench::test_support
