// What the adaptation stages that call a model once per input (synthesize, notes) are given and
// return (model_pool.hpp runs their jobs).
#pragma once

#include "model/factory.hpp"
#include "model/registry.hpp"

#include <atomic>
#include <cstddef>
#include <cstdio>

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

} // namespace ptxbench::adapt
