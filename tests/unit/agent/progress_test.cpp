// The progress line while a slow model thinks (issue 17): the calls and evaluations in flight
// with their age, a line a minute in logs, and what a requested stop waits for.
#include "agent/progress.hpp"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace std::chrono_literals;

namespace {

// A FILE* whose text the test reads after close().
class Captured {
public:
  Captured() : m_file(open_memstream(&m_buffer, &m_size)) {}
  ~Captured() {
    close();
    std::free(m_buffer);
  }
  std::FILE* file() const { return m_file; }
  std::string close() {
    if (m_file != nullptr)
      std::fclose(m_file);
    m_file = nullptr;
    return m_buffer == nullptr ? std::string() : std::string(m_buffer, m_size);
  }

private:
  char* m_buffer = nullptr;
  std::size_t m_size = 0;
  std::FILE* m_file;
};

const store::TrajectoryKey kFirst{"m", "gemm", "none", 0};
const store::TrajectoryKey kSecond{"m", "gemm", "none", 1};

} // namespace

TEST(ProgressInFlight, SaysHowManyCallsAndEvaluationsAreInFlightAndTheAgeOfTheOldest) {
  const SteadyTime now = std::chrono::steady_clock::now();
  EXPECT_EQ(render_in_flight({}, now), "");
  EXPECT_EQ(render_in_flight({{Activity::model_call, now - 192s},
                              {Activity::model_call, now - 5s},
                              {Activity::evaluation, now - 41s}},
                             now),
            "2 model calls in flight (oldest 3m12s) · 1 evaluation (41s)");
  EXPECT_EQ(render_in_flight({{Activity::model_call, now - 1700s}}, now),
            "1 model call in flight (28m20s)");
}

// On main nothing was printed until the first turn ended (27 minutes with a slow model).
TEST(ProgressInFlight, ALogGetsALineWhileACallIsInFlightAndNoneWhenNothingIs) {
  Captured out;
  {
    Progress progress(2, 2, out.file(), Display::lines);
    progress.watch(nullptr, ProgressTicks{5ms, 40ms});
    std::this_thread::sleep_for(120ms); // nothing in flight: no line
    progress.on_activity(kFirst, Activity::model_call, Edge::begins);
    std::this_thread::sleep_for(150ms);
    progress.finish();
  }
  const std::string text = out.close();
  EXPECT_TRUE(text.starts_with("trajectories 0/2 · turns 0 · correct 0 · 0s elapsed · 1 model "
                               "call in flight (0s)\n"))
      << text;
  EXPECT_EQ(text.find("elapsed\n"), std::string::npos) << text;
}

// On main the first Ctrl-C printed nothing and the run seemed to ignore it.
TEST(ProgressInFlight, ARequestedStopSaysOnceWhatItWaitsForAndHowToStopAtOnce) {
  Captured out, notices;
  std::atomic<bool> cancel{false};
  {
    Progress progress(2, 2, out.file(), Display::lines, notices.file());
    progress.on_activity(kFirst, Activity::model_call, Edge::begins);
    progress.on_activity(kSecond, Activity::evaluation, Edge::begins);
    progress.on_activity(kSecond, Activity::evaluation, Edge::ends);
    progress.watch(&cancel, ProgressTicks{5ms, 1h});
    cancel = true;
    std::this_thread::sleep_for(100ms);
    progress.finish();
  }
  const std::string text = notices.close();
  EXPECT_EQ(text, "ptxbench: stopping after what is in flight — waiting for 1 model call in flight "
                  "(0s); press Ctrl-C again to stop at once (the run stays resumable: ptxbench "
                  "run --resume DIR)\n");
  EXPECT_EQ(out.close(), "");
}
