// The fleet as its operators read it (`ptxbench fleet status`): workers with their GPU, state,
// health and task; the queue of every run; evaluations finished in the last minute; leases that
// expired. As text for a terminal, JSON for scripts, and Prometheus' text exposition format
// (version 0.0.4) for a scraper.
#pragma once

#include "fleet/broker.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ptxbench::fleet {

std::string status_text(const FleetStatus& status);
nlohmann::ordered_json status_json(const FleetStatus& status);
std::string status_prometheus(const FleetStatus& status);

// A Prometheus label value: backslash, double quote and newline escaped.
std::string prometheus_label(std::string_view text);

} // namespace ptxbench::fleet
