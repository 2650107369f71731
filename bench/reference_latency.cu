// Latency of the library references, for comparison with the same libraries called through
// PyTorch (bench/torch_reference_latency.py, same protocol), and of the GQA references next to
// the naive kernel:
//   per call: cudaMemsetAsync of a 256 MiB scratch buffer (L2 flush, outside the window), then
//   CUDA events around exactly one Reference::run on one stream (for GQA that is cuDNN's
//   metadata kernel, the SDPA kernel and the LSE kernel: everything the reference does);
//   per trial: 10 warm-up calls, 50 timed calls, median; 3 trials; report the mean of medians.
// Inputs: bf16 N(0,1) from the suite's Philox generator; the backward problems get spiky
// Q, K, V, dO and take O and LSE from our cuDNN forward at the same shape, as the suite's data;
// GQA index tensors are the workload's layout (suite::build_index_layout, as its blobs) and
// sm_scale the workload's scalar.
//
// Usage:
//   reference_latency [problem ...]   default: the five primary problems. A GQA problem gets
//                                     five rows: the library reference (FlashInfer, planned for
//                                     the workload's layout), cuDNN as `--reference cudnn` gives
//                                     it (planned for the workload's longest sequences, a CUDA
//                                     graph per call), the same with direct launches, cuDNN
//                                     planned for the shape's bounds (S = all tokens), and the
//                                     naive kernel.
//   reference_latency --cupti problem...   the same references timed by CUPTI activity records
//                                     (measure::CallTimer, strict windows, as the evaluator
//                                     times a reference: last end − first start of every
//                                     kernel/memset/memcpy of the call), one trial of 10 + 50,
//                                     with the kernels of one call listed.
//   reference_latency --serve         one trial per problem name read from stdin, answered
//                                     "<problem> <median ms>"; "libs" answers the cuDNN and
//                                     cuBLAS files this process mapped, then "end". For
//                                     interleaving with PyTorch in one session.
#include "measure/timing.hpp"
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/layouts.hpp"
#include "suite/philox.hpp"
#include "suite/suite.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
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
  if (i >= count)
    return;
  const auto e = static_cast<std::uint64_t>(i);
  data[i] = suite::bf16_bits(spiky ? suite::spiky_value(seed, tensor, e)
                                   : suite::normal_value(seed, tensor, e));
}

struct Buffers {
  std::vector<DeviceBuffer> owned;
  std::vector<void*> pointers;
  std::vector<PtxbenchScalar> scalars;

  PtxbenchCall call(cudaStream_t stream) const {
    return PtxbenchCall{PTXBENCH_CALL_VERSION,
                        static_cast<std::uint32_t>(pointers.size()),
                        static_cast<std::uint32_t>(scalars.size()),
                        0,
                        pointers.data(),
                        scalars.data(),
                        nullptr,
                        stream};
  }
};

// The workload's float scalar named `name` (GQA: sm_scale).
float workload_scalar(const suite::Problem& problem, const std::string& name) {
  for (const auto& [input, spec] : problem.workload.inputs)
    if (const auto* scalar = std::get_if<trace::ScalarInput>(&spec); scalar && input == name) {
      if (const auto* d = std::get_if<double>(&scalar->value))
        return static_cast<float>(*d);
    }
  throw util::Fatal(problem.name() + ": no float scalar " + name + " in the workload");
}

bool is_gqa(suite::OpKind kind) {
  return kind == suite::OpKind::gqa_ragged_prefill || kind == suite::OpKind::gqa_paged_prefill ||
         kind == suite::OpKind::gqa_paged_decode;
}

void upload_layout(const suite::Problem& problem, Buffers& buffers) {
  auto layout = suite::build_index_layout(problem.definition, problem.workload);
  if (!layout)
    throw util::Fatal(layout.error().message);
  for (const auto& named : *layout)
    for (std::size_t t = 0; t < problem.inputs.size(); ++t)
      if (problem.inputs[t].name == named.name)
        PTXBENCH_CUDA_CHECK(cudaMemcpy(buffers.pointers[t], named.values.data(),
                                       named.values.size() * sizeof(std::int32_t),
                                       cudaMemcpyHostToDevice));
}

// Buffers in ABI order (scalars are not buffers, so input t is pointer t only while no scalar
// precedes it — true of every suite problem: scalars come last).
Buffers allocate_filled(const suite::Problem& problem, bool spiky) {
  Buffers buffers;
  std::uint32_t index = 0;
  for (const auto* list : {&problem.inputs, &problem.outputs})
    for (const auto& tensor : *list) {
      if (tensor.scalar) {
        PtxbenchScalar scalar{};
        scalar.f32 = workload_scalar(problem, tensor.name);
        buffers.scalars.push_back(scalar);
        continue;
      }
      buffers.owned.emplace_back(static_cast<std::size_t>(tensor.size_bytes()));
      buffers.pointers.push_back(buffers.owned.back().get());
      const std::int64_t n = tensor.element_count();
      if (list == &problem.inputs && tensor.dtype == trace::DType::bfloat16)
        fill_bf16<<<static_cast<unsigned>((n + 255) / 256), 256>>>(
            buffers.owned.back().as<std::uint16_t>(), n, 20260427, index++, spiky);
    }
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  if (is_gqa(problem.kind))
    upload_layout(problem, buffers);
  return buffers;
}

std::unique_ptr<Reference> must(util::Expected<std::unique_ptr<Reference>> made) {
  if (!made)
    throw util::Fatal(made.error().message);
  return std::move(*made);
}

// mha_bwd_*: O and L (buffers 3 and 5) from the cuDNN forward of the matching forward problem.
void forward_into(const suite::Suite& suite, const suite::Problem& backward, Buffers& buffers,
                  cudaStream_t stream) {
  std::string name = backward.name();
  name.replace(0, std::string("mha_bwd_").size(), "mha_with_lse_");
  auto forward = must(make_library_reference(**suite.find(name)));
  const std::vector<void*> pointers{buffers.pointers[0], buffers.pointers[1], buffers.pointers[2],
                                    buffers.pointers[3], buffers.pointers[5]};
  const PtxbenchCall call{PTXBENCH_CALL_VERSION, 5,       0,       0,
                          pointers.data(),       nullptr, nullptr, stream};
  if (auto ok = forward->run(call); !ok)
    throw util::Fatal(ok.error().message);
  PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(stream)); // before `forward` frees its workspace
}

float timed_call(Reference& reference, const PtxbenchCall& call, void* flush,
                 const CudaEvent& start, const CudaEvent& stop) {
  const auto stream = static_cast<cudaStream_t>(call.stream);
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(flush, 0, kFlushBytes, stream));
  PTXBENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  if (auto ok = reference.run(call); !ok)
    throw util::Fatal(ok.error().message);
  PTXBENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
  PTXBENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0.0f;
  PTXBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

float trial_median(Reference& reference, const PtxbenchCall& call, void* flush) {
  const CudaEvent start = make_event();
  const CudaEvent stop = make_event();
  for (int i = 0; i < kWarmup; ++i)
    timed_call(reference, call, flush, start, stop);
  std::vector<float> times;
  for (int i = 0; i < kTimed; ++i)
    times.push_back(timed_call(reference, call, flush, start, stop));
  std::sort(times.begin(), times.end());
  return (times[kTimed / 2 - 1] + times[kTimed / 2]) / 2.0f; // even count: mean of the middle two
}

// One problem's inputs and the references timed on them.
struct Case {
  const suite::Problem* problem = nullptr;
  Buffers buffers;
  std::vector<std::unique_ptr<Reference>> references; // [0] = the library reference
  std::vector<std::string> notes;                     // what sets each apart, for the label
};

enum class Variants : std::uint8_t { library = 1, all = 2 };

Case make_case(const suite::Suite& suite, const std::string& name, cudaStream_t stream,
               Variants variants) {
  auto found = suite.find(name);
  if (!found)
    throw util::Fatal(found.error().message);
  Case c{*found, {}, {}, {}};
  const bool backward = c.problem->kind == suite::OpKind::mha_backward;
  c.buffers = allocate_filled(*c.problem, backward);
  if (backward)
    forward_into(suite, *c.problem, c.buffers, stream);
  c.references.push_back(must(make_library_reference(*c.problem)));
  c.notes.emplace_back();
  if (variants == Variants::library || !is_gqa(c.problem->kind))
    return c;
  auto shape = gqa_shape(*c.problem);
  if (!shape)
    throw util::Fatal(shape.error().message);
  const std::int64_t kv_total =
      shape->layout == GqaLayout::ragged_prefill ? shape->kv_rows : shape->page_indices;
  const GqaPlan bounds{shape->layout == GqaLayout::paged_decode ? 1 : shape->q_tokens, kv_total};
  auto planned = gqa_plan(*c.problem, *shape);
  if (!planned)
    throw util::Fatal(planned.error().message);
  c.references.push_back(must(make_library_reference(*c.problem, GqaBaseline::cudnn)));
  c.notes.emplace_back();
  c.references.push_back(must(make_cudnn_gqa(*shape, *planned, GqaLaunch::direct)));
  c.notes.emplace_back();
  if (auto bounded = make_cudnn_gqa(*shape, bounds)) {
    c.references.push_back(std::move(*bounded));
    c.notes.emplace_back(" [plan = shape bounds]");
  } else {
    std::printf("| %s | cuDNN planned for the shape bounds: %s | - | - | - |\n",
                c.problem->name().c_str(), bounded.error().message.c_str());
  }
  c.references.push_back(must(make_naive_reference(*c.problem)));
  c.notes.emplace_back();
  return c;
}

void print_rows(const Case& c, void* flush, cudaStream_t stream) {
  const PtxbenchCall call = c.buffers.call(stream);
  for (std::size_t r = 0; r < c.references.size(); ++r) {
    std::vector<float> medians;
    for (int t = 0; t < kTrials; ++t)
      medians.push_back(trial_median(*c.references[r], call, flush));
    double mean = 0.0;
    for (const float m : medians)
      mean += m / kTrials;
    const std::string label = c.references[r]->library() + c.notes[r];
    std::printf("| %s | %s | %.4f / %.4f / %.4f | %.4f | %.0f |\n", c.problem->name().c_str(),
                label.c_str(), medians[0], medians[1], medians[2], mean,
                static_cast<double>(c.problem->flops) / (mean * 1e-3) / 1e12);
    std::fflush(stdout);
  }
}

// One CUPTI trial per reference of the case: median over 50 strict windows, each after an L2
// flush and a synchronise outside the window; the kernels of the last call are listed.
void print_cupti_rows(measure::CallTimer& timer, const Case& c, void* flush, cudaStream_t stream) {
  const PtxbenchCall call = c.buffers.call(stream);
  for (std::size_t r = 0; r < c.references.size(); ++r) {
    const auto& reference = c.references[r];
    const measure::CallFn fn = [&](cudaStream_t) { return reference->run(call) ? 0 : 1; };
    std::vector<double> cupti_ms, event_ms;
    std::vector<measure::GpuActivity> last;
    for (int i = 0; i < kWarmup + kTimed; ++i) {
      PTXBENCH_CUDA_CHECK(cudaMemsetAsync(flush, 0, kFlushBytes, stream));
      PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
      auto timing = timer.time_call(fn, stream);
      if (!timing)
        throw util::Fatal(timing.error().message);
      if (timing->call_status != 0 || timing->late_work)
        throw util::Fatal("reference call failed");
      if (i < kWarmup)
        continue;
      cupti_ms.push_back(timing->latency_ms);
      event_ms.push_back(timing->event_ms);
      last = std::move(timing->activities);
    }
    std::sort(cupti_ms.begin(), cupti_ms.end());
    std::sort(event_ms.begin(), event_ms.end());
    std::printf("| %s | %s | %.4f | %.4f | %zu |\n", c.problem->name().c_str(),
                (reference->library() + c.notes[r]).c_str(),
                (cupti_ms[kTimed / 2 - 1] + cupti_ms[kTimed / 2]) / 2,
                (event_ms[kTimed / 2 - 1] + event_ms[kTimed / 2]) / 2, last.size());
    for (const auto& activity : last)
      std::printf("    %.60s  %.1f us\n", activity.name.c_str(),
                  static_cast<double>(activity.end_ns - activity.start_ns) / 1e3);
    std::fflush(stdout);
  }
}

// The cuDNN and cuBLAS(Lt) files mapped into this process (which build each side loaded).
void print_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> files;
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash == std::string::npos)
      continue;
    const std::string path = line.substr(slash);
    if (path.find("libcudnn") != std::string::npos || path.find("libcublas") != std::string::npos)
      files.insert(path);
  }
  std::printf("cuDNN %s (cudnnGetVersion), cuBLASLt %s\n", cudnn_version().c_str(),
              cublaslt_version().c_str());
  for (const auto& file : files)
    std::printf("mapped %s\n", file.c_str());
}

// One trial per stdin line; cases are built on first use and kept.
void serve(const suite::Suite& suite, void* flush, cudaStream_t stream) {
  std::map<std::string, Case> cases;
  for (std::string name; std::getline(std::cin, name);) {
    if (name == "libs") {
      print_libraries();
      std::printf("end\n");
    } else {
      auto it = cases.find(name);
      if (it == cases.end())
        it = cases.emplace(name, make_case(suite, name, stream, Variants::library)).first;
      const Case& c = it->second;
      std::printf("%s %.5f\n", name.c_str(),
                  trial_median(*c.references[0], c.buffers.call(stream), flush));
    }
    std::fflush(stdout);
  }
}

int run(int argc, char** argv) {
  auto suite = suite::Suite::load_default();
  if (!suite)
    throw util::Fatal(suite.error().message);
  const CudaStream stream = make_stream();
  const DeviceBuffer flush(kFlushBytes);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args == std::vector<std::string>{"--serve"}) {
    serve(*suite, flush.get(), stream.get());
    return 0;
  }
  if (!args.empty() && args[0] == "--cupti") {
    auto timer = measure::cupti_call_timer();
    if (!timer)
      throw util::Fatal(timer.error().message);
    std::fputs("| problem | library | CUPTI median (ms) | events median (ms) | activities |\n"
               "|---|---|---|---|---|\n",
               stdout);
    for (std::size_t i = 1; i < args.size(); ++i)
      print_cupti_rows(**timer, make_case(*suite, args[i], stream.get(), Variants::all),
                       flush.get(), stream.get());
    return 0;
  }
  if (args.empty())
    args = {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal", "mha_bwd_d128",
            "mha_bwd_d128_causal"};
  std::fputs("| problem | library | median per trial (ms) | mean of medians (ms) | TFLOP/s |\n"
             "|---|---|---|---|---|\n",
             stdout);
  for (const auto& name : args) {
    const Case c = make_case(*suite, name, stream.get(), Variants::all);
    print_rows(c, flush.get(), stream.get());
  }
  print_libraries();
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
