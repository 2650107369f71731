#include "cli/commands.hpp"
#include "suite/listing.hpp"
#include "suite/suite.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct ProblemsOptions {
  bool json = false;
  bool regenerate_blobs = false;
};

ExitCode regenerate() {
  auto written = suite::regenerate_blobs(suite::Suite::default_root());
  if (!written) {
    fmt::print(stderr, "ptxbench problems: {}\n", written.error().message);
    return ExitCode::usage;
  }
  for (const auto& path : *written)
    fmt::print("wrote {}\n", path.string());
  return ExitCode::ok;
}

ExitCode list(const ProblemsOptions& options) {
  auto loaded = suite::Suite::load_default();
  if (!loaded) {
    fmt::print(stderr, "ptxbench problems: {}\n", loaded.error().message);
    return ExitCode::usage;
  }
  fmt::print("{}", options.json ? suite::render_problems_json(*loaded)
                                : suite::render_problems_text(*loaded));
  return ExitCode::ok;
}

} // namespace

Action setup_problems(CLI::App& sub) {
  auto options = std::make_shared<ProblemsOptions>();
  sub.add_flag("--json", options->json, "print a JSON array instead of a table");
  sub.add_flag("--regenerate-blobs", options->regenerate_blobs,
               "rewrite the workloads' index blobs from their seeded layouts");
  return [options] { return options->regenerate_blobs ? regenerate() : list(*options); };
}

} // namespace ptxbench::cli
