// `ptxbench fleet status --broker URL`: the fleet that shares a PostgreSQL queue (docs/service.md
// "A fleet on PostgreSQL"): workers, GPUs, health, busy or idle, the queue of every run,
// evaluations per minute, expired leases; as text, JSON or Prometheus metrics.
#include "cli/commands.hpp"
#include "fleet/broker.hpp"
#include "fleet/status_view.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct FleetCliOptions {
  CLI::App* status = nullptr;
  std::string broker;
  std::string format = "text";
};

ExitCode run_status(const FleetCliOptions& o) {
  if (auto url = fleet::check_broker_url(o.broker); !url)
    return report_error("fleet status", url.error());
  fleet::BrokerOptions options;
  options.url = o.broker;
  options.reconnect_window = std::chrono::seconds(0);
  auto broker = fleet::Broker::connect(options);
  if (!broker)
    return report_error("fleet status", broker.error());
  auto status = (*broker)->status();
  if (!status)
    return report_error("fleet status", status.error());
  if (o.format == "json")
    fmt::print("{}\n", fleet::status_json(*status).dump(2));
  else if (o.format == "prometheus")
    fmt::print("{}", fleet::status_prometheus(*status));
  else
    fmt::print("{}", fleet::status_text(*status));
  return ExitCode::ok;
}

} // namespace

Action setup_fleet(CLI::App& sub) {
  auto o = std::make_shared<FleetCliOptions>();
  sub.require_subcommand(1);
  o->status = sub.add_subcommand("status", "workers, GPUs, health, queues per run, throughput");
  o->status->add_option("--broker", o->broker, "the fleet's queue: postgresql://user@host:port/db")
      ->required();
  o->status->add_option("--format", o->format, "text, json or prometheus")
      ->check(CLI::IsMember({"text", "json", "prometheus"}))
      ->capture_default_str();
  return [o] { return run_status(*o); };
}

} // namespace ptxbench::cli
