// `ptxbench fleet status` formats on a status built by hand: the workers' health in every
// format, and the Prometheus gauge of workers by health state.
#include "fleet/status_view.hpp"

#include <gtest/gtest.h>

using namespace ptxbench::fleet;

namespace {

FleetStatus three_workers() {
  FleetStatus status;
  status.workers = {
      {"a/cuda:0", "a", "cuda:0", "NVIDIA H200", "sm_90a", "idle", "ok", std::nullopt, 1, 4},
      {"a/cuda:1", "a", "cuda:1", "NVIDIA H200", "sm_90a", "draining",
       "throttled: hw_thermal_slowdown at 91 C after timing", std::nullopt, 1, 0},
      {"b/cpu", "b", "cpu", "", "sm_90a", "idle", "no GPU", std::nullopt, 2, 7},
  };
  return status;
}

} // namespace

TEST(FleetStatusView, EveryFormatCarriesTheWorkersHealth) {
  const FleetStatus status = three_workers();
  EXPECT_NE(status_text(status).find("throttled: hw_thermal_slowdown at 91 C after timing"),
            std::string::npos)
      << status_text(status);
  EXPECT_EQ(status_json(status)["workers"][1]["health"],
            "throttled: hw_thermal_slowdown at 91 C after timing");
}

TEST(FleetStatusView, PrometheusCountsWorkersByHealthStateEvenWhenNone) {
  FleetStatus status = three_workers();
  status.workers.push_back({"c/cuda:0", "c", "cuda:0", "NVIDIA H200", "sm_90a", "draining",
                            "broken: Xid 79 (unavailable: ECC counter)", std::nullopt, 3, 0});
  status.workers.push_back(
      {"d/cuda:0", "d", "cuda:0", "", "sm_90a", "idle", "", std::nullopt, 0, 0});
  const std::string metrics = status_prometheus(status);
  for (const char* line : {"ptxbench_fleet_workers_by_health{health=\"ok\"} 1\n",
                           "ptxbench_fleet_workers_by_health{health=\"throttled\"} 1\n",
                           "ptxbench_fleet_workers_by_health{health=\"broken\"} 1\n",
                           "ptxbench_fleet_workers_by_health{health=\"no_gpu\"} 1\n",
                           "ptxbench_fleet_workers_by_health{health=\"unknown\"} 1\n"})
    EXPECT_NE(metrics.find(line), std::string::npos) << line << metrics;
  EXPECT_NE(
      status_prometheus(FleetStatus{}).find("ptxbench_fleet_workers_by_health{health=\"ok\"} 0\n"),
      std::string::npos);
}
