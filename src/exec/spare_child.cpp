#include "exec/spare_child.hpp"

#include <atomic>
#include <fmt/format.h>
#include <unistd.h>

namespace ptxbench::exec {

std::filesystem::path fresh_child_log_path() {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         fmt::format("ptxbench-candidate-{}-{}.log", ::getpid(), counter++);
}

SpareChildren::SpareChildren(std::filesystem::path binary, int device, ChildStart policy,
                             CounterSessionAhead session_ahead, std::chrono::milliseconds deadline,
                             SparePrepare prepare)
    : m_binary(std::move(binary)), m_device(device), m_policy(policy),
      m_session_ahead(session_ahead), m_prepare(prepare), m_deadline(deadline) {
  if (m_policy == ChildStart::spare)
    m_spawner = std::thread([this] { serve(); });
}

SpareChildren::~SpareChildren() {
  {
    std::lock_guard guard(m_mutex);
    m_stopping = true;
  }
  m_changed.notify_all();
  if (m_spawner.joinable())
    m_spawner.join();
  for (StartedChild& child : m_retiring)
    stop(child);
  std::lock_guard guard(m_mutex);
  discard(m_spare);
}

void SpareChildren::discard(std::optional<StartedChild>& child) {
  if (!child)
    return;
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
  if (m_counter_session_held)
    return false;
  m_counter_session_held = true;
  return true;
}

bool SpareChildren::claim_counter_session(std::chrono::milliseconds patience) {
  std::unique_lock guard(m_mutex);
  if (!m_changed.wait_for(guard, patience, [&] { return !m_counter_session_held; }))
    return false;
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
  PTXBENCH_TRY_ASSIGN(auto process, CandidateProcess::start(m_binary, m_device, log));
  return StartedChild{std::move(process), std::move(log), std::nullopt};
}

util::Expected<StartedChild> SpareChildren::start_own(const ChildLaunch& launch) const {
  std::filesystem::path log = fresh_child_log_path();
  PTXBENCH_TRY_ASSIGN(auto process, CandidateProcess::start(launch, m_device, log));
  return StartedChild{std::move(process), std::move(log), std::nullopt};
}

void SpareChildren::stop(StartedChild& child) {
  child.process.stop(); // its context is torn down on the GPU: child work (the callers' gate)
  if (child.holds_counter_session)
    release_counter_session(); // ended with its process
  std::error_code ignored;
  std::filesystem::remove(child.log_path, ignored);
}

bool SpareChildren::session_beside_timing() const {
  return m_sessions_ahead_allowed && m_session_ahead == CounterSessionAhead::beside_timing &&
         m_uncounted == 0 && m_spare && m_spare->startup;
}

std::optional<std::chrono::steady_clock::time_point> SpareChildren::session_due() const {
  if (!m_sessions_ahead_allowed || !m_spare || !m_spare->startup ||
      m_spare->holds_counter_session || m_spare->session_asked || m_counter_session_held)
    return std::nullopt;
  if (session_beside_timing())
    return std::chrono::steady_clock::time_point::min(); // now, timed window or not
  if (m_evaluations > 0 || !m_gate.may_begin_child_work())
    return std::nullopt;
  return m_idle_since + kIdleBeforeSession;
}

bool SpareChildren::spare_needs_prepare() const {
  if (!m_spare)
    return false;
  if (!m_spare->startup)
    return true;
  // Prepared beside an evaluation, without the session: open it once the GPU has been idle.
  const auto due = session_due();
  return due && std::chrono::steady_clock::now() >= *due;
}

bool SpareChildren::prepare_allowed() const {
  return m_prepare == SparePrepare::beside_evaluation || m_untimed == 0;
}

// Sends the spare `prepare` (outside the mutex) as child work, or — opening the session of a
// prepared spare beside timed windows — as no child work (spare_child.hpp "The counter
// session"). The session is asked for only while no evaluation runs, or beside_timing while
// every running one has counted. A spare that fails its `prepare` is discarded and another is
// wanted.
void SpareChildren::prepare_spare(std::unique_lock<std::mutex>& guard) {
  const bool beside = session_beside_timing();
  if (!beside)
    m_gate.begin_child_work(); // the explicit check: throws inside a timed window
  m_preparing = true;
  const bool session = m_sessions_ahead_allowed && !m_counter_session_held &&
                       (beside || (m_evaluations == 0 && std::chrono::steady_clock::now() >=
                                                             m_idle_since + kIdleBeforeSession));
  if (session)
    m_counter_session_held = true;
  guard.unlock();
  protocol::Request prepare;
  prepare.op = protocol::RequestOp::prepare;
  prepare.counter_session = session;
  auto reply = m_spare->process.request(prepare, m_deadline);
  guard.lock();
  if (!beside)
    m_gate.end_child_work();
  m_preparing = false;
  const bool ready = reply && reply->ok;
  const bool opened = ready && session && reply->counter_session_open;
  if (session && !opened)
    m_counter_session_held = false;
  if (ready) {
    m_spare->startup = reply->startup ? *reply->startup : trace::Json::object();
    m_spare->holds_counter_session = opened;
    m_spare->session_asked = m_spare->session_asked || session;
  } else {
    // Not started again here: a child binary that dies at start would be spawned and prepared
    // in a loop that keeps the mutex to itself, and take() would wait for ever. The next take()
    // starts its own child, whose evaluation reports how it died, and wants a spare again.
    discard(m_spare);
  }
  m_changed.notify_all();
}

void SpareChildren::stop_retired(std::unique_lock<std::mutex>& guard) {
  std::vector<StartedChild> retiring = std::move(m_retiring);
  m_retiring.clear();
  m_gate.begin_child_work();
  m_stopping_children = true;
  guard.unlock();
  for (StartedChild& child : retiring)
    stop(child);
  retiring.clear();
  guard.lock();
  m_gate.end_child_work();
  m_stopping_children = false;
  m_changed.notify_all();
}

void SpareChildren::spawn(std::unique_lock<std::mutex>& guard) {
  m_wanted = false;
  m_spawning = true;
  guard.unlock();
  std::optional<StartedChild> next;
  if (auto started = start())
    next = std::move(*started);
  guard.lock();
  m_spawning = false;
  if (!m_spare)
    std::swap(m_spare, next);
  discard(next); // another spare got there first
  m_changed.notify_all();
}

// The thread: stops retired children, starts a spare when one is wanted (no GPU work: exec and
// library loading), and prepares the spare — child work only while the gate allows it; a
// prepared spare's session beside timed windows whenever it is due.
void SpareChildren::serve() {
  std::unique_lock guard(m_mutex);
  auto child_work = [&] {
    if (m_gate.may_begin_child_work())
      return !m_retiring.empty() || (prepare_allowed() && spare_needs_prepare());
    return session_beside_timing() && spare_needs_prepare();
  };
  auto ready = [&] { return m_stopping || m_wanted || child_work(); };
  for (;;) {
    if (m_stopping)
      return;
    if (!ready()) {
      // Every change notifies; a session becomes due with time alone.
      if (const auto due = session_due())
        m_changed.wait_until(guard, *due);
      else
        m_changed.wait(guard);
      continue;
    }
    if (m_gate.may_begin_child_work() && !m_retiring.empty())
      stop_retired(guard);
    else if (m_wanted)
      spawn(guard);
    else
      prepare_spare(guard);
  }
}

void SpareChildren::allow_sessions_ahead(bool allowed) {
  {
    std::unique_lock guard(m_mutex);
    m_sessions_ahead_allowed = allowed;
    if (!allowed) {
      m_changed.wait(guard, [&] { return !m_preparing; });
      if (m_spare && m_spare->holds_counter_session) {
        discard(m_spare); // its session closes with its process
        if (m_policy == ChildStart::spare)
          m_wanted = true;
      }
    }
  }
  m_changed.notify_all();
}

void SpareChildren::open_timed_window() {
  std::unique_lock guard(m_mutex);
  m_gate.want_timed_window();
  m_changed.wait(guard, [&] { return m_gate.may_open_timed_window(); });
  m_gate.open_timed_window();
}

void SpareChildren::close_timed_window() {
  {
    std::lock_guard guard(m_mutex);
    m_gate.close_timed_window();
  }
  m_changed.notify_all();
}

bool SpareChildren::timed_window_open() const {
  std::lock_guard guard(m_mutex);
  return m_gate.timed_window_open();
}

util::Expected<StartedChild> SpareChildren::take() {
  std::optional<StartedChild> taken;
  {
    std::unique_lock guard(m_mutex);
    // A spare being forked is a few milliseconds away, one being prepared is ready sooner than
    // a new one: waiting beats starting another.
    m_changed.wait(guard, [&] { return !m_spawning && !m_preparing; });
    taken.swap(m_spare);
    if (m_policy == ChildStart::spare)
      m_wanted = true;
  }
  m_changed.notify_all();
  if (taken && taken->process.exited()) { // died while it waited
    std::lock_guard guard(m_mutex);
    discard(taken);
  }
  if (!taken) {
    PTXBENCH_TRY_ASSIGN(auto started, start());
    taken = std::move(started);
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
  ++m_uncounted;
  ++m_untimed;
}

void SpareChildren::done_counting() {
  {
    std::lock_guard guard(m_mutex);
    --m_uncounted;
  }
  m_changed.notify_all();
}

void SpareChildren::done_timing() {
  {
    std::lock_guard guard(m_mutex);
    --m_untimed;
  }
  m_changed.notify_all();
}

void SpareChildren::end_evaluation(bool counted, bool timed) {
  {
    std::lock_guard guard(m_mutex);
    if (!counted)
      --m_uncounted;
    if (!timed)
      --m_untimed;
    if (--m_evaluations == 0)
      m_idle_since = std::chrono::steady_clock::now();
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
