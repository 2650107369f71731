#include "cli/commands.hpp"
#include "cli/run_job.hpp"

#include <fmt/core.h>

#include <memory>

namespace ptxbench::cli {
namespace {

// The built-in default: one short trajectory of the agent loop on the primary GEMM problem,
// with the `demo` model of config/models.json, which replays three recorded replies — a compile
// error, a wrong result and a correct wgmma+TMA kernel. On a GPU machine every turn goes
// through the GPU evaluator; elsewhere turns stop after the static check.
agent::RunPlan demo_plan() {
  agent::RunPlan plan;
  plan.models = {"demo"};
  plan.problems = {"gemm_n7168_k5120"};
  plan.prompt_variants = {"default"};
  plan.trajectories = 1;
  plan.loop.max_turns = 3;
  plan.jobs = 1;
  return plan;
}

struct DemoCliOptions {
  std::string out;
};

} // namespace

Action setup_demo(CLI::App& sub) {
  auto o = std::make_shared<DemoCliOptions>();
  sub.add_option("--out", o->out, "run directory (default runs/demo-<UTC time>)");
  return [o] {
    RunJob job;
    job.plan = demo_plan();
    job.show_turns = true;
    job.dir = o->out.empty() ? default_run_dir("demo") : std::filesystem::path(o->out);
    ExitCode code = run_job(std::move(job), "demo");
    fmt::print("Next: `ptxbench report DIR` for the paper's metrics, `ptxbench run --model NAME` "
               "with a model of config/models.json for a real run.\n");
    return code;
  };
}

} // namespace ptxbench::cli
