// How often do two correct bf16 attention backwards disagree under ptxbench's rule? On the
// suite's spiky data (N(0,1) + N(0,100)·Bernoulli(0.001)), three backwards of the same inputs:
//   cuDNN SDPA backward (the evaluator's reference), the naive fp32 backward (P and dS never
//   rounded: the closest to exact arithmetic we have), and an expert kernel (#included through
//   KERNEL_FILE, its `run` called as the harness calls it).
// For dQ, dK, dV it counts the elements that fail ptxbench's rule (|x−y| > 1e-2 and
// |x−y| > 1e-2·|y|, y the second operand) for each ordered pair, and how many of the kernel's
// failures against cuDNN are also cuDNN's failures against the naive backward.
//
// Usage: mha_bwd_agreement S [seed]     (B = 4, H = 48, D = 128 as the kernel is compiled)
#include KERNEL_FILE

#include "reference/library_check.hpp"
#include "reference/reference.hpp"
#include "suite/philox.hpp"
#include "suite/suite.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ptxbench::reference {
namespace {

__global__ void fill_spiky(std::uint16_t* data, std::int64_t count, std::uint64_t seed,
                           std::uint32_t tensor) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count)
    data[i] = suite::bf16_bits(suite::spiky_value(seed, tensor, static_cast<std::uint64_t>(i)));
}

__device__ float bf16_float(std::uint16_t bits) {
  return __uint_as_float(static_cast<std::uint32_t>(bits) << 16);
}

__device__ bool fails(float x, float y) {
  if (!isfinite(x) || !isfinite(y))
    return !(x == y);
  const float diff = fabsf(x - y);
  return diff > 1e-2f && diff > 1e-2f * fabsf(y);
}

// counts[0]: kernel vs cuDNN, [1]: cuDNN vs naive, [2]: kernel vs naive, [3]: elements failing
// both kernel vs cuDNN and cuDNN vs naive.
__global__ void count_failures(const std::uint16_t* kernel, const std::uint16_t* cudnn,
                               const std::uint16_t* naive, std::int64_t count,
                               unsigned long long* counts) {
  unsigned long long local[4] = {0, 0, 0, 0};
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float k = bf16_float(kernel[i]), c = bf16_float(cudnn[i]), n = bf16_float(naive[i]);
    const bool kc = fails(k, c), cn = fails(c, n);
    local[0] += kc;
    local[1] += cn;
    local[2] += fails(k, n);
    local[3] += kc && cn;
  }
  for (int j = 0; j < 4; ++j)
    if (local[j] != 0)
      atomicAdd(&counts[j], local[j]);
}

suite::Problem resized(suite::Problem problem, std::int64_t seq) {
  auto resize = [&](std::vector<suite::ResolvedTensor>& tensors) {
    for (auto& t : tensors)
      if (t.dims.size() >= 3)
        t.dims[2] = seq; // [B, H, S, D] and [B, H, S]
  };
  resize(problem.inputs);
  resize(problem.outputs);
  for (auto& [axis, value] : problem.var_axes)
    if (axis == "S")
      value = seq;
  return problem;
}

std::unique_ptr<Reference> must(util::Expected<std::unique_ptr<Reference>> made) {
  if (!made)
    throw util::Fatal(made.error().message);
  return std::move(*made);
}

PtxbenchCall call_of(const std::vector<void*>& pointers, const std::vector<std::int64_t>& axes) {
  return PtxbenchCall{PTXBENCH_CALL_VERSION,
                      static_cast<std::uint32_t>(pointers.size()),
                      0,
                      static_cast<std::uint32_t>(axes.size()),
                      pointers.data(),
                      nullptr,
                      axes.data(),
                      nullptr};
}

int agreement(std::int64_t seq, std::uint64_t seed) {
  auto suite = suite::Suite::load_default();
  if (!suite)
    throw util::Fatal(suite.error().message);
  const std::string backward_name = ::kCausal ? "mha_bwd_d128_causal" : "mha_bwd_d128";
  const std::string forward_name = ::kCausal ? "mha_with_lse_d128_causal" : "mha_with_lse_d128";
  const suite::Problem backward = resized(**suite->find(backward_name), seq);
  const suite::Problem forward = resized(**suite->find(forward_name), seq);
  const std::int64_t elements = backward.inputs[0].element_count();
  const std::size_t bf16_bytes = static_cast<std::size_t>(elements) * 2;
  const std::size_t lse_bytes = static_cast<std::size_t>(backward.inputs[5].element_count()) * 4;

  // Q K V O dO L, then dQ dK dV three times (cuDNN, naive, kernel).
  std::vector<DeviceBuffer> b;
  for (int i = 0; i < 5; ++i)
    b.emplace_back(bf16_bytes);
  b.emplace_back(lse_bytes);
  for (int i = 0; i < 9; ++i)
    b.emplace_back(bf16_bytes);
  const unsigned blocks = static_cast<unsigned>((elements + 255) / 256);
  const std::uint32_t tensor_of[] = {0, 1, 2, 99, 4}; // O (3) comes from the forward
  for (int i : {0, 1, 2, 4})
    fill_spiky<<<blocks, 256>>>(b[i].as<std::uint16_t>(), elements, seed, tensor_of[i]);
  PTXBENCH_CUDA_CHECK(cudaGetLastError());

  const std::vector<std::int64_t> axes{seq};
  auto fwd = must(make_library_reference(forward));
  const std::vector<void*> fwd_ptrs{b[0].get(), b[1].get(), b[2].get(), b[3].get(), b[5].get()};
  if (auto ok = fwd->run(call_of(fwd_ptrs, axes)); !ok)
    throw util::Fatal(ok.error().message);

  auto cudnn = must(make_library_reference(backward));
  auto naive = must(make_naive_reference(backward));
  for (int which = 0; which < 2; ++which) {
    std::vector<void*> ptrs;
    for (int i = 0; i < 6; ++i)
      ptrs.push_back(b[i].get());
    for (int o = 0; o < 3; ++o)
      ptrs.push_back(b[6 + 3 * which + o].get());
    Reference& ref = which == 0 ? *cudnn : *naive;
    if (auto ok = ref.run(call_of(ptrs, axes)); !ok)
      throw util::Fatal(ok.error().message);
  }
  run(b[0].as<__nv_bfloat16>(), b[1].as<__nv_bfloat16>(), b[2].as<__nv_bfloat16>(),
      b[3].as<__nv_bfloat16>(), b[4].as<__nv_bfloat16>(), b[5].as<float>(),
      b[12].as<__nv_bfloat16>(), b[13].as<__nv_bfloat16>(), b[14].as<__nv_bfloat16>(), seq,
      nullptr);
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());

  DeviceBuffer counts(4 * sizeof(unsigned long long));
  std::printf("%s S=%lld seed=%llu, %s, %lld elements per output\n", backward_name.c_str(),
              static_cast<long long>(seq), static_cast<unsigned long long>(seed),
              cudnn->library().c_str(), static_cast<long long>(elements));
  std::printf(
      "| output | kernel vs cuDNN | cuDNN vs naive | kernel vs naive | both (k-c and c-n) |\n");
  std::printf("|---|---|---|---|---|\n");
  const char* names[] = {"dQ", "dK", "dV"};
  unsigned long long total_kc = 0;
  for (int o = 0; o < 3; ++o) {
    PTXBENCH_CUDA_CHECK(cudaMemset(counts.get(), 0, counts.size_bytes()));
    count_failures<<<1024, 256>>>(b[12 + o].as<std::uint16_t>(), b[6 + o].as<std::uint16_t>(),
                                  b[9 + o].as<std::uint16_t>(), elements,
                                  counts.as<unsigned long long>());
    PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long c[4];
    PTXBENCH_CUDA_CHECK(cudaMemcpy(c, counts.get(), sizeof c, cudaMemcpyDeviceToHost));
    std::printf("| %s | %llu | %llu | %llu | %llu |\n", names[o], c[0], c[1], c[2], c[3]);
    total_kc += c[0];
  }
  return total_kc == 0 ? 0 : 1;
}

} // namespace
} // namespace ptxbench::reference

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s S [seed]\n", argv[0]);
    return 2;
  }
  const std::int64_t seq = std::atoll(argv[1]);
  const std::uint64_t seed = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20260427;
  try {
    return ptxbench::reference::agreement(seq, seed);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mha_bwd_agreement: %s\n", e.what());
    return 2;
  }
}
