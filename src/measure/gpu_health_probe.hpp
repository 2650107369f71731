// What a fleet worker reads about its GPU around each evaluation, for judge_health
// (gpu_health.hpp): NVML samples before and after, the Xid critical errors in between, and a
// probe of this process's CUDA state afterwards.
//
// An interface, so that a host without a GPU has none and a test can stand in a GPU that
// throttles or breaks; the real one (make_gpu_health_probe) reads NVML through GpuMonitor and
// probes CUDA with a small memset and a device synchronisation: a sticky error (an illegal
// address, a lost device) fails every later call of the context, and only a new process gets a
// new one. NVML missing, or a reading it does not offer, is noted as unavailable.
#pragma once

#include "measure/gpu_health.hpp"

#include <memory>

namespace ptxbench::measure {

class GpuHealthProbe {
public:
  virtual ~GpuHealthProbe() = default;
  // Before an evaluation: the supervisor's sample.
  virtual void before() = 0;
  // After it: before()'s sample and its own, the Xid errors since, the CUDA probe's finding.
  virtual HealthEvidence after() = 0;
};

// The probe of CUDA device `cuda_device`, in the calling thread's process.
std::unique_ptr<GpuHealthProbe> make_gpu_health_probe(int cuda_device);

} // namespace ptxbench::measure
