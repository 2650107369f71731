#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "report/export.hpp"
#include "store/run_store.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct ExportCliOptions {
  std::string run_dir;
  std::string out;
};

ExitCode run_export(const ExportCliOptions& o) {
  auto store = store::RunStore::open_existing(o.run_dir);
  if (!store)
    return report_error("export", store.error());
  std::filesystem::path out =
      o.out.empty() ? std::filesystem::path(o.run_dir) / "exports" : std::filesystem::path(o.out);
  auto files = report::export_run(**store, out);
  if (!files)
    return report_error("export", files.error());
  fmt::print("{} trajectories → {}\n{}\n{}\n", files->trajectories.size(),
             (out / "trajectories").string(), files->traces.string(), files->turns_csv.string());
  return ExitCode::ok;
}

} // namespace

Action setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportCliOptions>();
  sub.add_option("run_dir", o->run_dir, "a run directory (holds run.sqlite)")->required();
  sub.add_option("--out", o->out, "where to write (default RUN_DIR/exports)");
  return [o] { return run_export(*o); };
}

} // namespace ptxbench::cli
