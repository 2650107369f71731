#include "agent/remote_executor.hpp"
#include "cli/commands.hpp"
#include "cli/run_job.hpp"
#include "cli/tools.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

// The built-in default: one short trajectory of the agent loop on the primary GEMM problem,
// with the `demo` model of config/models.json, which replays three recorded replies — a compile
// error, a wrong result and a correct wgmma+TMA kernel. On a GPU machine (or with
// --eval-service) every turn goes through the GPU evaluator; elsewhere turns stop after the
// static check.
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
  std::vector<std::string> eval_service;
};

} // namespace

Action setup_demo(CLI::App& sub) {
  auto o = std::make_shared<DemoCliOptions>();
  sub.add_option("--out", o->out, "run directory (default runs/demo-<UTC time>)");
  sub.add_option("--eval-service", o->eval_service,
                 "run the GPU step on evaluation service(s) (`ptxbench serve`): URL[,URL]")
      ->delimiter(',');
  return [o] {
    if (auto urls = agent::check_service_urls(o->eval_service); !urls)
      return report_error("demo", urls.error());
    RunJob job;
    job.plan = demo_plan();
    job.plan.eval.service = o->eval_service;
    job.show_turns = true;
    job.dir = o->out.empty() ? default_run_dir("demo") : std::filesystem::path(o->out);
    ExitCode code = run_job(std::move(job), "demo");
    fmt::print("Next: `ptxbench report DIR` for the paper's metrics, `ptxbench run --model NAME` "
               "with a model of config/models.json for a real run.\n");
    return code;
  };
}

} // namespace ptxbench::cli
