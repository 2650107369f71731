// What the adaptation stages that call a model once per input (synthesize, notes) are given and
// return (model_pool.hpp runs their jobs).
#pragma once

#include "model/factory.hpp"
#include "model/registry.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace ptxbench::adapt {

struct ModelStageDeps {
  const model::ModelRegistry* registry = nullptr;
  model::ClientDeps client;
  std::FILE* progress_out = nullptr;         // one line per finished job; null: quiet
  const std::atomic<bool>* cancel = nullptr; // optional: no new pass starts once set
};

struct ModelStageResult {
  std::size_t inputs = 0;
  std::size_t already_done = 0;
  std::size_t done = 0;   // by this call
  std::size_t failed = 0; // by this call (retried by the next)
  std::size_t left = 0;   // not attempted (stopped)
  double cost_usd = 0;
};

// The stage's model, found in the registry; `role` names it in the error ("notes model").
inline util::Expected<const model::ModelSpec*>
stage_model(const ModelStageDeps& deps, const std::string& name, std::string_view role) {
  if (deps.registry == nullptr)
    throw util::Fatal("a model stage without a registry");
  const model::ModelSpec* spec = deps.registry->find(name);
  if (spec == nullptr)
    return util::make_error(util::ErrorKind::not_found, std::string(role) + " \"" + name +
                                                            "\" is not in the registry " +
                                                            deps.registry->origin.string());
  return spec;
}

// Whether the stage was told to stop: no new pass starts.
inline bool cancelled(const ModelStageDeps& deps) {
  return deps.cancel != nullptr && deps.cancel->load();
}

// The "counts" object of a stage's manifest.
inline util::Json manifest_counts(const ModelStageResult& result) {
  return {{"inputs", result.inputs},
          {"done", result.already_done + result.done},
          {"failed", result.failed},
          {"left", result.left}};
}

} // namespace ptxbench::adapt
