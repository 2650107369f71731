// Latency of the library references on the five primary problems, for comparison with the same
// libraries called through PyTorch (bench/torch_reference_latency.py, same protocol):
//   per call: cudaMemsetAsync of a 256 MiB scratch buffer (L2 flush, outside the window), then
//   CUDA events around exactly one Reference::run on one stream;
//   per trial: 10 warm-up calls, 50 timed calls, median; 3 trials; report the mean of medians.
// Inputs: bf16 N(0,1) from the suite's Philox generator; the backward problems get spiky
// Q, K, V, dO and take O and LSE from our cuDNN forward at the same shape, as the suite's data.
//
// Usage: reference_latency [problem ...]   (default: the five primary problems)
#include "reference/cuda_check.hpp"
#include "reference/reference.hpp"
#include "suite/philox.hpp"
#include "suite/suite.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace ptxbench::reference {
namespace {

constexpr int kWarmup = 10;
constexpr int kTimed = 50;
constexpr int kTrials = 3;
constexpr std::size_t kFlushBytes = std::size_t{256} << 20;

__global__ void fill_bf16(std::uint16_t* data, std::int64_t count, std::uint64_t seed,
                          std::uint32_t tensor, bool spiky) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const auto e = static_cast<std::uint64_t>(i);
  data[i] = suite::bf16_bits(spiky ? suite::spiky_value(seed, tensor, e)
                                   : suite::normal_value(seed, tensor, e));
}

struct Buffers {
  std::vector<DeviceBuffer> owned;
  std::vector<void*> pointers;

  PtxbenchCall call(cudaStream_t stream) const {
    return PtxbenchCall{PTXBENCH_CALL_VERSION, static_cast<std::uint32_t>(pointers.size()), 0, 0,
                        pointers.data(), nullptr, nullptr, stream};
  }
};

Buffers allocate_filled(const suite::Problem& problem, bool spiky) {
  Buffers buffers;
  std::uint32_t index = 0;
  for (const auto* list : {&problem.inputs, &problem.outputs})
    for (const auto& tensor : *list) {
      buffers.owned.emplace_back(static_cast<std::size_t>(tensor.size_bytes()));
      buffers.pointers.push_back(buffers.owned.back().get());
      const std::int64_t n = tensor.element_count();
      if (list == &problem.inputs && tensor.dtype == trace::DType::bfloat16)
        fill_bf16<<<static_cast<unsigned>((n + 255) / 256), 256>>>(
            buffers.owned.back().as<std::uint16_t>(), n, 20260427, index++, spiky);
    }
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  return buffers;
}

std::unique_ptr<Reference> library_reference(const suite::Problem& problem) {
  auto made = make_library_reference(problem);
  if (!made) throw util::Fatal(made.error().message);
  return std::move(*made);
}

// mha_bwd_*: O and L (buffers 3 and 5) from the cuDNN forward of the matching forward problem.
void forward_into(const suite::Suite& suite, const suite::Problem& backward, Buffers& buffers,
                  cudaStream_t stream) {
  std::string name = backward.name();
  name.replace(0, std::string("mha_bwd_").size(), "mha_with_lse_");
  auto forward = library_reference(**suite.find(name));
  const std::vector<void*> pointers{buffers.pointers[0], buffers.pointers[1],
                                    buffers.pointers[2], buffers.pointers[3],
                                    buffers.pointers[5]};
  const PtxbenchCall call{PTXBENCH_CALL_VERSION, 5, 0, 0, pointers.data(), nullptr, nullptr,
                          stream};
  if (auto ok = forward->run(call); !ok) throw util::Fatal(ok.error().message);
  PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(stream)); // before `forward` frees its workspace
}

float timed_call(Reference& reference, const PtxbenchCall& call, void* flush,
                 const CudaEvent& start, const CudaEvent& stop) {
  const auto stream = static_cast<cudaStream_t>(call.stream);
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(flush, 0, kFlushBytes, stream));
  PTXBENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  if (auto ok = reference.run(call); !ok) throw util::Fatal(ok.error().message);
  PTXBENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  PTXBENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0.0f;
  PTXBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

float trial_median(Reference& reference, const PtxbenchCall& call, void* flush) {
  const CudaEvent start = make_event();
  const CudaEvent stop = make_event();
  for (int i = 0; i < kWarmup; ++i) timed_call(reference, call, flush, start, stop);
  std::vector<float> times;
  for (int i = 0; i < kTimed; ++i) times.push_back(timed_call(reference, call, flush, start, stop));
  std::sort(times.begin(), times.end());
  return (times[kTimed / 2 - 1] + times[kTimed / 2]) / 2.0f; // even count: mean of the middle two
}

void measure(const suite::Suite& suite, const suite::Problem& problem, void* flush,
             cudaStream_t stream) {
  const bool backward = problem.kind == suite::OpKind::mha_backward;
  Buffers buffers = allocate_filled(problem, backward);
  if (backward) forward_into(suite, problem, buffers, stream);
  auto reference = library_reference(problem);
  const PtxbenchCall call = buffers.call(stream);
  std::vector<float> medians;
  for (int t = 0; t < kTrials; ++t) medians.push_back(trial_median(*reference, call, flush));
  double mean = 0.0;
  for (const float m : medians) mean += m / kTrials;
  const double flops = static_cast<double>(problem.flops);
  std::printf("| %s | %s | %.4f / %.4f / %.4f | %.4f | %.0f |\n", problem.name().c_str(),
              reference->library().c_str(), medians[0], medians[1], medians[2], mean,
              flops / (mean * 1e-3) / 1e12);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  auto suite = suite::Suite::load_default();
  if (!suite) throw util::Fatal(suite.error().message);
  std::vector<std::string> names{"gemm_n7168_k5120", "mha_with_lse_d128",
                                 "mha_with_lse_d128_causal", "mha_bwd_d128",
                                 "mha_bwd_d128_causal"};
  if (argc > 1) names.assign(argv + 1, argv + argc);
  const CudaStream stream = make_stream();
  const DeviceBuffer flush(kFlushBytes);
  std::fputs("| problem | library | median per trial (ms) | mean of medians (ms) | TFLOP/s |\n"
             "|---|---|---|---|---|\n", stdout);
  for (const auto& name : names) {
    auto problem = suite->find(name);
    if (!problem) throw util::Fatal(problem.error().message);
    measure(*suite, **problem, flush.get(), stream.get());
  }
  return 0;
}

} // namespace
} // namespace ptxbench::reference

int main(int argc, char** argv) {
  try {
    return ptxbench::reference::run(argc, argv);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "reference_latency: %s\n", error.what());
    return 1;
  }
}
