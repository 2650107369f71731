// Runs the knowledge-pack GPU cases, each in a forked child with its own CUDA context and a
// wall-clock limit, and prints PASS/FAIL per case. Exit status: 0 only if every case passed.
// Usage: knowledge_gpu_test [substring]   runs the cases whose name contains it.
#include "harness.cuh"

#include <chrono>
#include <cstdio>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace kp {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

void fail_call(const char* lib, const char* file, int line, const char* call, const char* error) {
  throw std::runtime_error(std::string(lib) + " " + file + ":" + std::to_string(line) + " " + call +
                           " -> " + error);
}

uint16_t bf16_bits(float f) {
  const __nv_bfloat16 b = __float2bfloat16_rn(f);
  uint16_t bits;
  std::memcpy(&bits, &b, 2);
  return bits;
}

float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::vector<float> small_ints(size_t count, uint32_t seed, int span) {
  std::vector<float> v(count);
  uint32_t s = seed * 2654435761u + 1u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((s >> 16) % static_cast<uint32_t>(2 * span + 1)) -
                           span);
  }
  return v;
}

std::string sync_kernel(const char* what) {
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess)
    return std::string(what) + ": launch " + cudaGetErrorName(launch);
  const cudaError_t run = cudaDeviceSynchronize();
  if (run != cudaSuccess)
    return std::string(what) + ": " + cudaGetErrorName(run) +
           " (a trap means a bounded wait timed out)";
  return {};
}

} // namespace kp

namespace {

constexpr int kCaseLimitSeconds = 60;

int run_child(const kp::Case& c) {
  alarm(kCaseLimitSeconds);
  try {
    const std::string error = c.fn();
    if (!error.empty()) {
      std::printf("      %s\n", error.c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("      exception: %s\n", e.what());
    return 1;
  }
}

bool run_case(const kp::Case& c) {
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int rc = run_child(c);
    std::fflush(stdout);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (WIFSIGNALED(status))
    std::printf("      killed by signal %d (%s)\n", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? "case time limit" : "crash");
  std::printf("%s %s (%.0f ms)\n", ok ? "PASS" : "FAIL", c.name, ms);
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  int run = 0;
  int failed = 0;
  for (const kp::Case& c : kp::registry()) {
    if (!filter.empty() && std::string(c.name).find(filter) == std::string::npos)
      continue;
    ++run;
    if (!run_case(c))
      ++failed;
  }
  std::printf("%d cases, %d failed\n", run, failed);
  return failed == 0 && run > 0 ? 0 : 1;
}
