// A long job as a list of named, timed phases, so --verbose can show where time went.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace ptxbench::util {

struct Phase {
  std::string name;
  std::chrono::microseconds elapsed{0};
};

class PhaseLog {
public:
  // Runs `work`, records its wall time under `name`, and returns what it returned.
  template <typename Work> auto time(std::string name, Work&& work) {
    auto start = std::chrono::steady_clock::now();
    struct Record {
      PhaseLog& log;
      std::string name;
      std::chrono::steady_clock::time_point start;
      ~Record() {
        log.m_phases.push_back(
            {std::move(name), std::chrono::duration_cast<std::chrono::microseconds>(
                                  std::chrono::steady_clock::now() - start)});
      }
    } record{*this, std::move(name), start};
    return work();
  }

  const std::vector<Phase>& phases() const { return m_phases; }

private:
  std::vector<Phase> m_phases;
};

} // namespace ptxbench::util
