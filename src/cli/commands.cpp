#include "cli/commands.hpp"

#include "cli/command.hpp"

#include <array>

namespace ptxbench::cli {

std::span<const Command> commands() {
  static constexpr std::array kCommands{
      Command{"version", "print the ptxbench version, its nvcc and cuobjdump, and the GPU",
              setup_version},
      Command{"problems", "list the benchmark problems with shapes, FLOPs and baselines",
              setup_problems},
      Command{"show", "print a problem's definition, C ABI signature and baseline", setup_show},
      Command{"check",
              "gate, compile and statically verify a kernel (no GPU needed): registers, "
              "spills, SASS families, static verdict",
              setup_check},
      Command{"eval",
              "evaluate a kernel on the GPU: correctness on seeded inputs, timing against the "
              "library baseline, executed target instructions (static part without a GPU)",
              setup_eval},
      Command{"run",
              "the benchmark: models × problems × prompt variants × trajectories of the "
              "multi-turn kernel agent into a run directory (resumable)",
              setup_run},
      Command{"serve",
              "the evaluation service: HTTP/JSON, one supervisor per GPU, a task queue that "
              "survives restarts (`ptxbench run --eval-service URL` uses it)",
              setup_serve},
      Command{"fleet",
              "a fleet of GPU workers sharing a PostgreSQL queue (`serve --broker`, `run "
              "--broker`): `fleet status`",
              setup_fleet},
      Command{"show-turn",
              "print the exact messages the model got at one turn of a run (guidance, "
              "retrieved notes and all) and what was retrieved for them",
              setup_show_turn},
      Command{"export",
              "write a run's trajectory JSON, FlashInfer-Trace traces JSONL and per-turn CSV",
              setup_export},
      Command{"demo",
              "the built-in default job: a short replayed agent trajectory on the GEMM problem "
              "(GPU step when there is a GPU)",
              setup_demo},
      Command{"pack", "list knowledge-pack prompt variants or print one composed", setup_pack},
      Command{"report",
              "the paper's metrics and tables (correctness, best speedup, Fast_p, error "
              "transitions) from one or more run directories",
              setup_report},
      Command{"fixit",
              "Fixit SFT data from runs: collect failures, balance, repair (teacher), pair, "
              "synthesize rationales (reasoner), build rows, stats, bundle; `fixit all` runs a "
              "recipe (docs/adapt.md)",
              setup_fixit},
      Command{"kernelgen",
              "KernelGen SFT data from runs: collect correct kernels, synthesize rationales, build "
              "rows, stats, bundle",
              setup_kernelgen},
  };
  return kCommands;
}

} // namespace ptxbench::cli
