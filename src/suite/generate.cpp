#include "suite/generate.hpp"

#include "suite/philox.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/core.h>
#include <thread>
#include <vector>

namespace ptxbench::suite {
namespace {

constexpr std::size_t kBlockElements = 4;

Normal4 draw(const TensorRequest& request, std::uint64_t block) {
  return request.distribution == Distribution::spiky
             ? spiky_block(request.seed, request.tensor_index, block)
             : normal_block(request.seed, request.tensor_index, block);
}

void store(const TensorRequest& request, const Normal4& values, std::size_t first,
           std::size_t count, std::byte* out) {
  if (request.dtype == trace::DType::float32) {
    std::memcpy(out + first * sizeof(float), values.value, count * sizeof(float));
    return;
  }
  std::uint16_t packed[kBlockElements];
  for (std::size_t lane = 0; lane < count; ++lane)
    packed[lane] = bf16_bits(values.value[lane]);
  std::memcpy(out + first * sizeof(std::uint16_t), packed, count * sizeof(std::uint16_t));
}

void fill_blocks(const TensorRequest& request, std::uint64_t first_block, std::uint64_t end_block,
                 std::byte* out) {
  for (std::uint64_t block = first_block; block < end_block; ++block) {
    const std::size_t first = block * kBlockElements;
    const std::size_t count = std::min(kBlockElements, request.element_count - first);
    store(request, draw(request, block), first, count, out);
  }
}

std::size_t element_bytes(trace::DType dtype) {
  return dtype == trace::DType::float32 ? 4 : 2;
}

util::Status check_request(const TensorRequest& request, std::size_t out_bytes) {
  if (request.distribution != Distribution::normal && request.distribution != Distribution::spiky)
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("cannot generate a {} tensor on the host", to_string(request.distribution)));
  if (request.dtype != trace::DType::float32 && request.dtype != trace::DType::bfloat16)
    return util::make_error(util::ErrorKind::invalid_input,
                            "host generation supports float32 and bfloat16 only");
  if (out_bytes != request.element_count * element_bytes(request.dtype))
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("buffer holds {} bytes, the tensor needs {}", out_bytes,
                                        request.element_count * element_bytes(request.dtype)));
  return util::Ok{};
}

} // namespace

util::Status generate_tensor(const TensorRequest& request, std::span<std::byte> out,
                             ThreadCount threads) {
  PTXBENCH_TRY(check_request(request, out.size()));
  const std::uint64_t blocks = (request.element_count + kBlockElements - 1) / kBlockElements;
  unsigned workers = threads.value != 0 ? threads.value : std::thread::hardware_concurrency();
  workers = static_cast<unsigned>(
      std::clamp<std::uint64_t>(std::min<std::uint64_t>(workers, blocks / 4096), 1, 1024));
  const std::uint64_t per_worker = (blocks + workers - 1) / workers;
  std::vector<std::jthread> pool;
  for (unsigned w = 1; w < workers; ++w) {
    const std::uint64_t first = std::min(blocks, w * per_worker);
    const std::uint64_t end = std::min(blocks, first + per_worker);
    pool.emplace_back(
        [&request, first, end, &out] { fill_blocks(request, first, end, out.data()); });
  }
  fill_blocks(request, 0, std::min(blocks, per_worker), out.data());
  return util::Ok{};
}

} // namespace ptxbench::suite
