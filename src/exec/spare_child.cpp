#include "exec/spare_child.hpp"

#include "exec/gpu_lock.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <shared_mutex>

namespace ptxbench::exec {

std::filesystem::path fresh_child_log_path() {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         fmt::format("ptxbench-candidate-{}-{}.log", ::getpid(), counter++);
}

SpareChildren::SpareChildren(std::filesystem::path binary, ChildStart policy, GpuLock& lock,
                             std::chrono::milliseconds deadline)
    : m_binary(std::move(binary)), m_policy(policy), m_lock(lock), m_deadline(deadline) {
  if (m_policy == ChildStart::spare) m_spawner = std::thread([this] { serve(); });
}

SpareChildren::~SpareChildren() {
  {
    std::lock_guard guard(m_mutex);
    m_stopping = true;
  }
  m_changed.notify_all();
  if (m_spawner.joinable()) m_spawner.join();
  for (StartedChild& child : m_retiring) stop(child);
  std::lock_guard guard(m_mutex);
  discard(m_spare);
}

void SpareChildren::discard(std::optional<StartedChild>& child) {
  if (!child) return;
  std::filesystem::path log = child->log_path;
  const bool held = child->holds_counter_session;
  child.reset(); // kills the process group
  if (held) {
    m_counter_session_held = false;
    m_changed.notify_all();
  }
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
}

bool SpareChildren::try_claim_counter_session() {
  std::lock_guard guard(m_mutex);
  if (m_counter_session_held) return false;
  m_counter_session_held = true;
  return true;
}

bool SpareChildren::claim_counter_session(std::chrono::milliseconds patience) {
  std::unique_lock guard(m_mutex);
  if (!m_changed.wait_for(guard, patience, [&] { return !m_counter_session_held; })) return false;
  m_counter_session_held = true;
  return true;
}

void SpareChildren::release_counter_session() {
  {
    std::lock_guard guard(m_mutex);
    m_counter_session_held = false;
  }
  m_changed.notify_all();
}

util::Expected<StartedChild> SpareChildren::start() const {
  std::filesystem::path log = fresh_child_log_path();
  auto process = CandidateProcess::start(m_binary, log);
  if (!process) return process.take_error();
  return StartedChild{std::move(*process), std::move(log), std::nullopt};
}

void SpareChildren::stop(StartedChild& child) {
  {
    std::shared_lock gpu(m_lock); // its context is torn down on the GPU
    child.process.stop();
  }
  if (child.holds_counter_session) release_counter_session(); // ended with its process
  std::error_code ignored;
  std::filesystem::remove(child.log_path, ignored);
}

// Sends the spare `prepare` (outside the mutex, under the GPU lock held shared); a spare
// that fails it is discarded and another is wanted.
void SpareChildren::prepare_spare(std::unique_lock<std::mutex>& guard) {
  m_preparing = true;
  const bool session = !m_counter_session_held; // the GPU is idle: nothing counts now
  if (session) m_counter_session_held = true;
  guard.unlock();
  std::optional<trace::Json> startup;
  bool opened = false;
  {
    std::shared_lock gpu(m_lock);
    protocol::Request prepare;
    prepare.op = protocol::RequestOp::prepare;
    prepare.counter_session = session;
    auto reply = m_spare->process.request(prepare, m_deadline);
    if (reply && reply->ok) {
      startup = reply->startup ? *reply->startup : trace::Json::object();
      opened = session && reply->counter_session_open;
    }
  }
  guard.lock();
  m_preparing = false;
  if (session && !opened) m_counter_session_held = false;
  if (startup) {
    m_spare->startup = std::move(startup);
    m_spare->holds_counter_session = opened;
  } else {
    discard(m_spare);
    m_wanted = true;
  }
  m_changed.notify_all();
}

// The thread: stops retired children first, then starts a spare when one is wanted, then
// prepares the spare while the GPU is idle.
void SpareChildren::serve() {
  std::unique_lock guard(m_mutex);
  auto unprepared_while_idle = [&] {
    return m_spare && !m_spare->startup && m_evaluations == 0;
  };
  for (;;) {
    m_changed.wait(guard, [&] {
      return m_stopping || m_wanted || !m_retiring.empty() || unprepared_while_idle();
    });
    if (m_stopping) return;
    if (m_retiring.empty() && !m_wanted) {
      prepare_spare(guard);
      continue;
    }
    if (!m_retiring.empty()) {
      std::vector<StartedChild> retiring = std::move(m_retiring);
      m_retiring.clear();
      m_stopping_children = true;
      guard.unlock();
      for (StartedChild& child : retiring) stop(child);
      retiring.clear();
      guard.lock();
      m_stopping_children = false;
      m_changed.notify_all();
      continue;
    }
    m_wanted = false;
    m_spawning = true;
    guard.unlock();
    std::optional<StartedChild> next;
    if (auto started = start()) next = std::move(*started);
    guard.lock();
    m_spawning = false;
    if (!m_spare) std::swap(m_spare, next);
    discard(next); // another spare got there first
    m_changed.notify_all();
  }
}

util::Expected<StartedChild> SpareChildren::take() {
  std::optional<StartedChild> taken;
  {
    std::unique_lock guard(m_mutex);
    // A spare being forked is a few milliseconds away, one being prepared is ready sooner than
    // a new one: waiting beats starting another.
    m_changed.wait(guard, [&] { return !m_spawning && !m_preparing; });
    taken.swap(m_spare);
    if (m_policy == ChildStart::spare) m_wanted = true;
  }
  m_changed.notify_all();
  if (taken && taken->process.exited()) { // died while it waited
    std::lock_guard guard(m_mutex);
    discard(taken);
  }
  if (!taken) {
    auto started = start();
    if (!started) return started.take_error();
    taken = std::move(*started);
  }
  return std::move(*taken);
}

void SpareChildren::retire(StartedChild child) {
  if (m_policy != ChildStart::spare) {
    stop(child);
    return;
  }
  {
    std::lock_guard guard(m_mutex);
    m_retiring.push_back(std::move(child));
  }
  m_changed.notify_all();
}

void SpareChildren::begin_evaluation() {
  std::lock_guard guard(m_mutex);
  ++m_evaluations;
}

void SpareChildren::end_evaluation() {
  {
    std::lock_guard guard(m_mutex);
    --m_evaluations;
  }
  m_changed.notify_all();
}

void SpareChildren::settle() {
  std::unique_lock guard(m_mutex);
  m_changed.wait(guard, [&] {
    return m_retiring.empty() && !m_stopping_children && !m_spawning && !m_preparing;
  });
}

int SpareChildren::count() const {
  std::unique_lock guard(m_mutex);
  m_changed.wait(guard, [&] { return !m_spawning && !m_preparing; });
  return m_spare ? 1 : 0;
}

} // namespace ptxbench::exec
