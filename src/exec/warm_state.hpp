// What one Evaluator keeps for all its evaluations on one GPU (evaluator.hpp): the GPU lock,
// the leased input sets with their reference outputs, the library references, the spare
// candidate child, and the L2 scratch and NVML monitor of the reference trials. Internal to
// exec/.
#pragma once

#include "exec/buffers.hpp"
#include "exec/gpu_lock.hpp"
#include "exec/spare_child.hpp"
#include "exec/warm_cache.hpp"
#include "measure/nvml_monitor.hpp"
#include "measure/timing.hpp"
#include "reference/reference.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ptxbench::exec::detail {

// Input sets and reference outputs of one (problem, workload, seed, set count), and the
// digest of the inputs when they were made: a lease is used only while the inputs still
// match it (checked on the GPU when taken).
struct WarmInputs {
  EvalBuffers buffers;
  std::uint64_t digest = 0;
  std::size_t bytes = 0;
};

// A library reference (or the naive one standing in, with the library's reason).
struct WarmReference {
  std::unique_ptr<reference::Reference> reference;
  std::string fallback; // why the library reference is not the one used, or empty
};

struct WarmState {
  WarmState(std::filesystem::path candidate_binary, int cuda_device, std::size_t budget_bytes,
            ChildStart children, CounterSessionAhead counter_session,
            SparePrepare spare_prepare = SparePrepare::beside_evaluation)
      : device(cuda_device), inputs(budget_bytes), references(kMaxIdleReferences),
        spares(std::move(candidate_binary), cuda_device, children, counter_session,
               std::chrono::seconds(60), spare_prepare) {}

  static constexpr std::size_t kMaxIdleReferences = 64;

  int device; // the CUDA device of every evaluation, its threads and its children
  GpuLock lock;
  WarmCache<WarmInputs> inputs;        // cost: device bytes
  WarmCache<WarmReference> references; // cost: 1 per reference
  SpareChildren spares;
  // Used only under the exclusive lock (reference trials).
  std::unique_ptr<measure::L2Flusher> flusher;
  std::optional<measure::GpuMonitor> monitor;
  bool monitor_tried = false;
  // The GPU's dense bf16 tensor peak (measure::LiveDevice), read once; none where unknown.
  std::optional<double> peak_tflop_s;
  bool peak_tried = false;
};

// The lease key of a problem's input sets: problem, workload, seed and set count.
std::string warm_key(const suite::Problem& problem, std::uint64_t seed, int sets);

} // namespace ptxbench::exec::detail
