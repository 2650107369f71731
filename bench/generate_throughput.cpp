// Host generation of seeded inputs (suite/generate.hpp): the wall time to fill 1e8 bf16
// elements with the normal and the spiky distribution, the inputs of the largest problems.
// Needs no GPU. Formerly the always-skipped test Generate.HundredMillionBf16Timing.
//
//   generate_throughput [--count N] [--threads T]   (defaults: 1e8 elements, T = 0: every core)
// prints one line per distribution on stdout.
#include "suite/generate.hpp"

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  using namespace ptxbench;
  std::size_t count = 100'000'000;
  unsigned threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--count" && i + 1 < argc)
      count = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--threads" && i + 1 < argc)
      threads = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 10));
    else {
      fmt::print(stderr, "usage: generate_throughput [--count N] [--threads T]\n");
      return 2;
    }
  }
  const unsigned used = threads != 0 ? threads : std::thread::hardware_concurrency();
  std::vector<std::byte> out(count * 2);
  for (auto distribution : {suite::Distribution::normal, suite::Distribution::spiky}) {
    const auto start = std::chrono::steady_clock::now();
    const util::Status status = suite::generate_tensor(
        {distribution, trace::DType::bfloat16, 7, 0, count}, out, suite::ThreadCount{threads});
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (!status) {
      fmt::print(stderr, "generate_tensor: {}\n", status.error().message);
      return 1;
    }
    fmt::print("{}: {} bf16 in {:.3f} s ({:.0f} M elements/s) with {} threads\n",
               suite::to_string(distribution), count, elapsed.count(),
               static_cast<double>(count) / elapsed.count() / 1e6, used);
  }
  return 0;
}
