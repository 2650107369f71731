// session_open_probe: what the range profiler's first Start of a session spends its time on
// (issue 35). counter_session_h200.md found that opening a session costs 365–415 ms (929 ms the
// first time in a process) and that nearly all of it is one call, the first
// cuptiRangeProfilerStart; this probe looks inside that call, from outside the libraries:
//   - the calling thread's CPU time across the session's opening (getrusage, user and system)
//     against its wall time: computation in the libraries, work in the kernel driver, or waiting;
//   - a sampler thread reading /proc/self/task/<tid>/syscall every 200 µs: whether the thread
//     runs in user space or is blocked in a system call, and for an ioctl on an NVIDIA device
//     which escape (RM control: its command; RM alloc: its object class, both read from the
//     parameter block with process_vm_readv) and where the kernel keeps it waiting (wchan);
//   - variants, each in a fresh process, that change one thing the cost might scale with: the
//     number of hardware channels (CUDA_DEVICE_MAX_CONNECTIONS), CUPTI activity tracing, the
//     metric set, the replay mode, device memory allocated, modules loaded, module loading.
//   session_open_probe                  every variant in turn, each in its own process: one JSON
//                                       line per variant on stdout, then a markdown summary
//   session_open_probe --variant NAME   one variant in this process (its JSON line)
//   session_open_probe --sampler-check  the sampler on known work, no GPU: 60 ms computing, 60 ms
//                                       in nanosleep, 60 ms blocked in read (its JSON line)
// bench/run_overhead_probes_on_device.sh runs it on the GPU machine (bench/results/
// session_open_probe_h200.md).
#include "bench/wgmma_gemm_call.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/timing.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace ptxbench;
using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Variant {
  const char* name;
  const char* what;
  std::vector<std::pair<const char*, const char*>> env;
};

// In the order run. `default` runs twice: the second shows a session opened right after
// another process closed one.
const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"default",
       "as the candidate child: tracing on, the counter table's metrics, user replay",
       {}},
      {"default_again", "the same, right after the previous process closed its sessions", {}},
      {"connections_1", "one hardware channel per context", {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}}},
      {"connections_32", "32 hardware channels", {{"CUDA_DEVICE_MAX_CONNECTIONS", "32"}}},
      {"no_tracing", "CUPTI activity tracing never enabled", {}},
      {"one_metric", "a single hardware metric (sm__cycles_elapsed.max)", {}},
      {"kernel_replay", "kernel replay instead of user replay", {}},
      {"no_gemm", "no GEMM module loaded and no GEMM buffers before the session", {}},
      {"big_memory", "64 GiB of device memory allocated before the session", {}},
      {"eager_loading", "CUDA_MODULE_LOADING=EAGER", {{"CUDA_MODULE_LOADING", "EAGER"}}},
  };
  return all;
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double ms(const timeval& t) {
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
}

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string out = text.str();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\0'))
    out.pop_back();
  return out;
}

std::optional<std::uint32_t> read_u32(std::uint64_t address) {
  std::uint32_t value = 0;
  iovec local{&value, sizeof value};
  iovec remote{reinterpret_cast<void*>(address), sizeof value}; // NOLINT(performance-no-int-to-ptr)
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != sizeof value)
    return std::nullopt;
  return value;
}

const char* syscall_name(long number) {
  switch (number) {
  case SYS_read:
    return "read";
  case SYS_write:
    return "write";
  case SYS_poll:
    return "poll";
  case SYS_ppoll:
    return "ppoll";
  case SYS_mmap:
    return "mmap";
  case SYS_munmap:
    return "munmap";
  case SYS_mprotect:
    return "mprotect";
  case SYS_futex:
    return "futex";
  case SYS_nanosleep:
    return "nanosleep";
  case SYS_clock_nanosleep:
    return "clock_nanosleep";
  case SYS_sched_yield:
    return "sched_yield";
  case SYS_openat:
    return "openat";
  case SYS_close:
    return "close";
  case SYS_epoll_wait:
    return "epoll_wait";
  case SYS_madvise:
    return "madvise";
  default:
    return nullptr;
  }
}

// What the thread `tid` is doing now, as a label: "user", or the system call it is blocked in
// (an NVIDIA ioctl with its escape and RM command or class) and its wait channel.
class ThreadState {
public:
  explicit ThreadState(pid_t tid) : m_task(fmt::format("/proc/self/task/{}/", tid)) {}

  std::string label() {
    const std::string line = read_small_file(m_task + "syscall");
    if (line.empty())
      return "unreadable";
    if (line == "running")
      return "user";
    std::istringstream fields(line);
    long number = 0;
    fields >> number;
    if (number < 0)
      return "blocked outside a system call";
    std::array<std::uint64_t, 3> args{};
    for (std::uint64_t& arg : args)
      fields >> std::hex >> arg;
    std::string what = number == SYS_ioctl               ? ioctl_label(args)
                       : syscall_name(number) != nullptr ? std::string(syscall_name(number))
                                                         : fmt::format("syscall {}", number);
    const std::string wchan = read_small_file(m_task + "wchan");
    if (!wchan.empty() && wchan != "0")
      what += " @" + wchan;
    return what;
  }

private:
  std::string ioctl_label(const std::array<std::uint64_t, 3>& args) {
    const auto fd = static_cast<int>(args[0]);
    const std::uint64_t cmd = args[1];
    const unsigned type = (cmd >> 8) & 0xffU, escape = cmd & 0xffU;
    std::string label = fmt::format("ioctl {}", device_name(fd));
    if (type != 'F')
      return label + fmt::format(" cmd 0x{:x}", cmd);
    if (escape == 0x2a) { // RM control: NVOS54_PARAMETERS {hClient, hObject, cmd, ...}
      auto command = read_u32(args[2] + 8);
      return label + (command ? fmt::format(" rm_control 0x{:08x}", *command) : " rm_control");
    }
    if (escape == 0x2b) { // RM alloc: {hRoot, hObjectParent, hObjectNew, hClass, ...}
      auto object_class = read_u32(args[2] + 12);
      return label +
             (object_class ? fmt::format(" rm_alloc class 0x{:04x}", *object_class) : " rm_alloc");
    }
    return label + fmt::format(" escape 0x{:02x}", escape);
  }

  const std::string& device_name(int fd) {
    auto known = m_fds.find(fd);
    if (known != m_fds.end())
      return known->second;
    std::array<char, 256> target{};
    const ssize_t n =
        readlink(fmt::format("/proc/self/fd/{}", fd).c_str(), target.data(), target.size() - 1);
    std::string name =
        n > 0 ? std::string(target.data(), static_cast<std::size_t>(n)) : fmt::format("fd {}", fd);
    if (auto slash = name.rfind('/'); slash != std::string::npos)
      name = name.substr(slash + 1);
    return m_fds.emplace(fd, std::move(name)).first->second;
  }

  std::string m_task;
  std::map<int, std::string> m_fds;
};

struct Sample {
  Clock::time_point at;
  std::string label;
};

// Samples the calling thread's state from a thread of its own until stopped.
class Sampler {
public:
  Sampler() : m_tid(static_cast<pid_t>(syscall(SYS_gettid))) {
    m_thread = std::thread([this] {
      ThreadState state(m_tid);
      while (!m_stop.load()) {
        m_samples.push_back({Clock::now(), state.label()});
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  }
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;
  ~Sampler() { stop(); }
  const std::vector<Sample>& stop() {
    if (m_thread.joinable()) {
      m_stop.store(true);
      m_thread.join();
    }
    return m_samples;
  }

private:
  pid_t m_tid;
  std::atomic<bool> m_stop{false};
  std::vector<Sample> m_samples;
  std::thread m_thread;
};

int thread_count() {
  const std::string status = read_small_file("/proc/self/status");
  const auto at = status.find("Threads:");
  return at == std::string::npos ? -1 : std::atoi(status.c_str() + at + 8);
}

// The steps of one session's opening, each with its samples' labels (most frequent first).
Json attribute(const std::vector<util::Phase>& steps, Clock::time_point began,
               const std::vector<Sample>& samples) {
  Json out = Json::array();
  Clock::time_point from = began;
  for (const util::Phase& step : steps) {
    const Clock::time_point to = from + step.elapsed;
    std::map<std::string, int> counts;
    int total = 0;
    for (const Sample& sample : samples)
      if (sample.at >= from && sample.at < to) {
        ++counts[sample.label];
        ++total;
      }
    std::vector<std::pair<std::string, int>> ranked(counts.begin(), counts.end());
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    Json labels = Json::object();
    for (std::size_t i = 0; i < ranked.size() && i < 8; ++i)
      labels[ranked[i].first] = ranked[i].second;
    out.push_back({{"step", step.name},
                   {"ms", static_cast<double>(step.elapsed.count()) / 1e3},
                   {"samples", total},
                   {"labels", std::move(labels)}});
    from = to;
  }
  return out;
}

// One session opened and warmed as the child opens it, sampled.
Json open_sampled(measure::InstructionCounter& counter, cudaStream_t stream) {
  rusage thread_before{}, process_before{}, thread_after{}, process_after{};
  getrusage(RUSAGE_THREAD, &thread_before);
  getrusage(RUSAGE_SELF, &process_before);
  const int threads_before = thread_count();
  Sampler sampler;
  const Clock::time_point began = Clock::now();
  auto steps = counter.open_session(measure::launch_warmup_kernel, stream);
  const double wall = ms(Clock::now() - began);
  const std::vector<Sample>& samples = sampler.stop();
  getrusage(RUSAGE_THREAD, &thread_after);
  getrusage(RUSAGE_SELF, &process_after);
  Json out = {{"wall_ms", wall},
              {"thread_user_ms", ms(thread_after.ru_utime) - ms(thread_before.ru_utime)},
              {"thread_sys_ms", ms(thread_after.ru_stime) - ms(thread_before.ru_stime)},
              {"process_user_ms", ms(process_after.ru_utime) - ms(process_before.ru_utime)},
              {"process_sys_ms", ms(process_after.ru_stime) - ms(process_before.ru_stime)},
              {"threads_before", threads_before},
              {"threads_after", thread_count()}};
  if (!steps) {
    out["error"] = steps.error().message;
    return out;
  }
  out["steps"] = attribute(*steps, began, samples);
  return out;
}

Json run_variant(const std::string& name) {
  Json out = {{"variant", name}};
  Json setup = Json::object();
  Clock::time_point since = Clock::now();
  auto lap = [&](const char* step) {
    const Clock::time_point now = Clock::now();
    setup[step] = ms(now - since);
    since = now;
  };
  int devices = 0;
  cudaGetDeviceCount(&devices);
  lap("cuda_driver");
  if (name != "no_tracing") {
    if (auto timer = measure::cupti_call_timer(); !timer)
      out["tracing_error"] = timer.error().message;
    lap("cupti_tracing");
  }
  measure::CounterOptions options;
  options.replay =
      name == "kernel_replay" ? measure::CounterReplay::kernel : measure::CounterReplay::user;
  options.availability = measure::CounterAvailability::assume;
  if (name == "one_metric")
    options.metrics = {"sm__cycles_elapsed.max"};
  auto counter = measure::InstructionCounter::create_with(0, std::move(options));
  if (!counter) {
    out["error"] = counter.error().message;
    return out;
  }
  lap("counter_config");
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
    out["error"] = "no CUDA context on device 0";
    return out;
  }
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  lap("context");
  std::unique_ptr<bench::WgmmaGemmCall> gemm;
  if (name != "no_gemm") {
    gemm = std::make_unique<bench::WgmmaGemmCall>();
    (*gemm)(stream); // loads the GEMM's module
    cudaStreamSynchronize(stream);
    lap("gemm_loaded");
  }
  void* big = nullptr;
  if (name == "big_memory") {
    if (cudaMalloc(&big, std::size_t{64} << 30) != cudaSuccess)
      out["big_memory_error"] = "cudaMalloc of 64 GiB failed";
    lap("big_memory");
  }
  out["setup_ms"] = std::move(setup);
  out["first_session"] = open_sampled(*counter, stream);
  if (gemm) {
    const Clock::time_point began = Clock::now();
    auto counts = counter->count([&](cudaStream_t s) { return (*gemm)(s); }, stream,
                                 [&](cudaStream_t s) { gemm->reset(s); });
    out["count_ms"] = ms(Clock::now() - began);
    if (counts)
      out["gmma"] = counts->total("smsp__sass_inst_executed_op_shared_gmma.sum").value_or(-1.0);
    else
      out["count_error"] = counts.error().message;
  }
  out["close_ms"] = static_cast<double>(counter->close_session().elapsed.count()) / 1e3;
  out["second_session"] = open_sampled(*counter, stream);
  out["second_close_ms"] = static_cast<double>(counter->close_session().elapsed.count()) / 1e3;
  cudaFree(big);
  gemm.reset();
  cudaStreamDestroy(stream);
  return out;
}

// Runs `variant` in a fresh process of this binary with its environment; its JSON line, or a
// line saying how it ended.
Json run_child(const char* self, const Variant& variant) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    throw util::Fatal("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    for (const auto& [key, value] : variant.env)
      setenv(key, value, 1);
    execl(self, self, "--variant", variant.name, static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string text;
  std::array<char, 4096> buffer{};
  for (ssize_t n = 0; (n = read(pipe_fds[0], buffer.data(), buffer.size())) > 0;)
    text.append(buffer.data(), static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Json line = Json::parse(text, nullptr, false);
  if (line.is_discarded())
    line = {{"variant", variant.name},
            {"error", fmt::format("exit status {}, output: {}", status, text)}};
  line["what"] = variant.what;
  return line;
}

double field(const Json& json, const char* key) {
  return json.contains(key) && json[key].is_number() ? json[key].get<double>() : -1.0;
}

// The step `name` of a session's JSON: its wall ms and its three most frequent labels.
std::pair<double, std::string> step_summary(const Json& session, const char* name) {
  if (!session.contains("steps"))
    return {-1.0, session.value("error", std::string("no steps"))};
  for (const Json& step : session["steps"]) {
    if (step["step"] != name)
      continue;
    std::string labels;
    int shown = 0;
    const int total = step["samples"].get<int>();
    for (const auto& [label, count] : step["labels"].items()) {
      if (shown++ == 3)
        break;
      labels += fmt::format("{}{} {:.0f} %", labels.empty() ? "" : "; ", label,
                            total > 0 ? 100.0 * count.get<double>() / total : 0.0);
    }
    return {step["ms"].get<double>(), labels};
  }
  return {-1.0, "no such step"};
}

void print_summary(const std::vector<Json>& lines) {
  fmt::print("\n| variant | session 1 wall ms | its start ms | thread user / sys ms | start "
             "spent in | session 2 start ms | count ms | threads |\n"
             "|---|---|---|---|---|---|---|---|\n");
  for (const Json& line : lines) {
    if (!line.contains("first_session")) {
      fmt::print("| {} | error: {} | | | | | | |\n", line["variant"].get<std::string>(),
                 line.value("error", std::string("?")));
      continue;
    }
    const Json& first = line["first_session"];
    const auto [start_ms, spent] = step_summary(first, "start");
    const auto [second_start_ms, second_spent] = step_summary(line["second_session"], "start");
    (void)second_spent;
    fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} / {:.1f} | {} | {:.1f} | {:.1f} | {} → {} |\n",
               line["variant"].get<std::string>(), field(first, "wall_ms"), start_ms,
               field(first, "thread_user_ms"), field(first, "thread_sys_ms"), spent,
               second_start_ms, field(line, "count_ms"), first.value("threads_before", -1),
               first.value("threads_after", -1));
  }
}

// The sampler's labels over three steps whose state is known (no GPU needed).
Json sampler_check() {
  std::vector<util::Phase> steps;
  Sampler sampler;
  const Clock::time_point began = Clock::now();
  Clock::time_point since = began;
  auto step = [&](const char* name) {
    const Clock::time_point now = Clock::now();
    steps.push_back({name, std::chrono::duration_cast<std::chrono::microseconds>(now - since)});
    since = now;
  };
  volatile double sink = 0.0;
  while (Clock::now() - since < std::chrono::milliseconds(60))
    sink = sink + 1.0;
  step("compute");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  step("nanosleep");
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0)
    throw util::Fatal("pipe failed");
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    (void)write(pipe_fds[1], "x", 1);
  });
  char byte = 0;
  (void)read(pipe_fds[0], &byte, 1);
  step("read");
  writer.join();
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  return {{"sampler_check", attribute(steps, began, sampler.stop())}};
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--sampler-check") == 0) {
    fmt::print("{}\n", sampler_check().dump());
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "--variant") == 0) {
    fmt::print("{}\n", run_variant(argv[2]).dump());
    return 0;
  }
  std::vector<Json> lines;
  for (const Variant& variant : variants()) {
    lines.push_back(run_child("/proc/self/exe", variant));
    fmt::print("{}\n", lines.back().dump());
    std::fflush(stdout);
  }
  print_summary(lines);
  return 0;
}
