#include "measure/gpu_health_probe.hpp"

#include "cuda/check.hpp"
#include "cuda/owned.hpp"

#include <cuda_runtime.h>
#include <optional>

namespace ptxbench::measure {
namespace {

constexpr std::size_t kScratchBytes = 256;

class NvmlCudaProbe final : public GpuHealthProbe {
public:
  explicit NvmlCudaProbe(int device) : m_device(device) {
    auto monitor = GpuMonitor::create(device);
    if (!monitor) {
      m_nvml_missing = "NVML (" + monitor.error().message + ")";
      return;
    }
    m_monitor = std::move(*monitor);
    auto watching = m_monitor->watch_xid_errors();
    m_xid_watched = watching && *watching;
  }

  void before() override {
    m_evidence = HealthEvidence{};
    sample(SampleMoment::before_evaluation);
  }

  HealthEvidence after() override {
    sample(SampleMoment::after_evaluation);
    note_unavailable();
    if (m_xid_watched) {
      if (auto xids = m_monitor->take_xid_errors())
        m_evidence.xid_errors = std::move(*xids);
      else
        m_evidence.unavailable.push_back("Xid events (" + xids.error().message + ")");
    }
    if (auto probed = probe_cuda(); !probed)
      m_evidence.cuda_fault = probed.error().message;
    return std::exchange(m_evidence, HealthEvidence{});
  }

private:
  void sample(SampleMoment moment) {
    if (!m_monitor)
      return;
    if (auto snap = m_monitor->snapshot())
      m_evidence.samples.push_back({moment, std::move(*snap)});
    else
      m_evidence.unavailable.push_back(std::string("NVML sample ") +
                                       std::string(to_string(moment)) + " (" +
                                       snap.error().message + ")");
  }

  void note_unavailable() {
    if (!m_monitor) {
      m_evidence.unavailable.push_back(m_nvml_missing);
      return;
    }
    if (!m_xid_watched)
      m_evidence.unavailable.push_back("Xid events");
    if (m_evidence.samples.empty())
      return;
    const GpuSnapshot& last = m_evidence.samples.back().gpu;
    if (!last.ecc_uncorrected_volatile)
      m_evidence.unavailable.push_back("ECC counter");
    if (!last.slowdown_temperature_c)
      m_evidence.unavailable.push_back("slowdown temperature");
  }

  // A sticky error of this process's context fails the memset or the synchronisation.
  util::Status probe_cuda() {
    PTXBENCH_CUDA_TRY(cudaSetDevice(m_device), util::ErrorKind::unsupported);
    if (!m_scratch) {
      void* scratch = nullptr;
      PTXBENCH_CUDA_TRY(cudaMalloc(&scratch, kScratchBytes), util::ErrorKind::unsupported);
      m_scratch = cuda::DeviceMemory(scratch);
    }
    PTXBENCH_CUDA_TRY(cudaMemset(m_scratch.get(), 0, kScratchBytes), util::ErrorKind::unsupported);
    PTXBENCH_CUDA_TRY(cudaDeviceSynchronize(), util::ErrorKind::unsupported);
    return util::Ok{};
  }

  int m_device;
  std::optional<GpuMonitor> m_monitor;
  std::string m_nvml_missing;
  bool m_xid_watched = false;
  cuda::DeviceMemory m_scratch;
  HealthEvidence m_evidence;
};

} // namespace

std::unique_ptr<GpuHealthProbe> make_gpu_health_probe(int cuda_device) {
  return std::make_unique<NvmlCudaProbe>(cuda_device);
}

} // namespace ptxbench::measure
