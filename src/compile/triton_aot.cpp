#include "compile/triton_aot.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <system_error>

namespace ptxbench::compile {
namespace {

constexpr auto kAotTimeout = std::chrono::minutes(5);

util::Error aot_bad_output(std::string_view what) {
  return util::make_error(util::ErrorKind::subprocess,
                          fmt::format("the Triton AOT compile (aot.py) answered {}", what));
}

std::optional<TritonAotOutcome> outcome_of_stage(std::string_view stage) {
  if (stage == "import")
    return TritonAotOutcome::import_error;
  if (stage == "run" || stage == "no_launch")
    return TritonAotOutcome::cannot_specialise;
  if (stage == "compile")
    return TritonAotOutcome::compile_error;
  return std::nullopt;
}

// One launch of the output at `path`; a field of the wrong type is recorded in `reader` (the
// output comes from a process that imported the candidate, which may write to its stdout).
TritonAotLaunch parse_launch(util::JsonReader& reader, const util::Json& item,
                             const std::string& path) {
  TritonAotLaunch launch;
  if (!reader.expect_object(item, path))
    return launch;
  launch.kernel = reader.string(item, path, "kernel", util::Emptiness::rejected);
  launch.function = reader.string(item, path, "function", util::Emptiness::rejected);
  launch.cubin = reader.string(item, path, "cubin", util::Emptiness::rejected);
  if (const util::Json* grid = util::JsonReader::optional(item, "grid")) {
    if (reader.expect_array(*grid, util::key_path(path, "grid")))
      for (std::size_t i = 0; i < grid->size(); ++i)
        launch.grid.push_back(
            reader.integer_at((*grid)[i], util::index_path(util::key_path(path, "grid"), i)));
  }
  launch.num_warps =
      static_cast<int>(reader.optional_integer(item, path, "num_warps", 0).value_or(0));
  launch.num_stages =
      static_cast<int>(reader.optional_integer(item, path, "num_stages", 0).value_or(0));
  launch.shared_bytes = reader.optional_integer(item, path, "shared_bytes", 0).value_or(0);
  launch.constexprs = nlohmann::ordered_json::object();
  if (const util::Json* constexprs = reader.optional_object(item, path, "constexprs"))
    for (const auto& [key, value] : constexprs->items())
      launch.constexprs[key] = value;
  // "autotune" is null for a kernel without @triton.autotune.
  const util::Json* tune = util::JsonReader::optional(item, "autotune");
  const std::string tune_path = util::key_path(path, "autotune");
  if (tune != nullptr && !tune->is_null() && reader.expect_object(*tune, tune_path)) {
    const auto configs = reader.optional_integer(*tune, tune_path, "configs", 0).value_or(0);
    const auto config =
        reader.optional_string(*tune, tune_path, "config", util::Emptiness::allowed);
    launch.autotune =
        fmt::format("first of {} configurations: {}", configs, config.value_or(std::string()));
  }
  return launch;
}

} // namespace

std::string_view to_string(TritonAotOutcome outcome) {
  switch (outcome) {
  case TritonAotOutcome::ok:
    return "ok";
  case TritonAotOutcome::cannot_specialise:
    return "cannot_specialise";
  case TritonAotOutcome::compile_error:
    return "compile_error";
  case TritonAotOutcome::import_error:
    return "import_error";
  }
  return "unknown";
}

std::vector<std::filesystem::path> TritonAotResult::cubins() const {
  std::vector<std::filesystem::path> paths;
  for (const auto& launch : launches)
    paths.push_back(launch.cubin);
  return paths;
}

util::Expected<TritonAotResult> parse_aot_output(std::string_view json) {
  const util::Json parsed = util::Json::parse(json, nullptr, false);
  if (parsed.is_discarded())
    return aot_bad_output("with something that is not its JSON");
  util::JsonReader reader("aot.py output");
  const bool ok = reader.expect_object(parsed, "$") && reader.boolean(parsed, "$", "ok");
  if (!reader.ok())
    return aot_bad_output("with something that is not its JSON: " +
                          reader.finish(0).error().message);
  TritonAotResult result;
  if (!ok) {
    const std::string stage =
        reader.optional_string(parsed, "$", "stage", util::Emptiness::allowed).value_or("");
    const std::string message =
        reader.optional_string(parsed, "$", "message", util::Emptiness::allowed).value_or("");
    if (!reader.ok())
      return aot_bad_output(reader.finish(0).error().message);
    if (stage == "triton_missing")
      return util::make_error(util::ErrorKind::not_found,
                              fmt::format("the static SASS report of a Triton candidate needs "
                                          "Triton, which is not installed ({}); scripts/setup.sh "
                                          "installs it into .deps/python-triton/",
                                          message));
    auto outcome = outcome_of_stage(stage);
    if (!outcome)
      return aot_bad_output(fmt::format("with an unknown stage '{}': {}", stage, message));
    result.outcome = *outcome;
    result.message = message;
    return result;
  }
  result.triton_version =
      reader.optional_string(parsed, "$", "triton", util::Emptiness::allowed).value_or("");
  const util::Json* launches = util::JsonReader::optional(parsed, "launches");
  if (launches == nullptr || (launches->is_array() && launches->empty()))
    return aot_bad_output("ok without launches");
  if (!reader.expect_array(*launches, "$.launches"))
    return aot_bad_output("with a malformed launch: " + reader.finish(0).error().message);
  for (std::size_t i = 0; i < launches->size(); ++i)
    result.launches.push_back(
        parse_launch(reader, (*launches)[i], util::index_path("$.launches", i)));
  if (!reader.ok())
    return aot_bad_output("with a malformed launch: " + reader.finish(0).error().message);
  return result;
}

nlohmann::ordered_json make_aot_spec(Arch arch, const std::vector<TritonAotArg>& args) {
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (const auto& arg : args) {
    if (arg.dtype) {
      params.push_back({{"name", arg.name},
                        {"kind", "tensor"},
                        {"dtype", trace::to_string(*arg.dtype)},
                        {"shape", arg.dims}});
      continue;
    }
    nlohmann::ordered_json param{{"name", arg.name}, {"kind", "scalar"}};
    std::visit([&param](const auto& v) { param["value"] = v; }, arg.value);
    params.push_back(std::move(param));
  }
  return {{"arch", std::string(to_string(arch))}, {"params", std::move(params)}};
}

std::filesystem::path default_triton_path() {
  if (const char* env = std::getenv("PTXBENCH_TRITON_PATH"); env != nullptr && *env != '\0')
    return env;
  std::error_code ec;
  const auto bundled = util::data_root() / ".deps" / "python-triton";
  return std::filesystem::is_directory(bundled / "triton", ec) ? bundled : std::filesystem::path();
}

TritonAotCompiler::TritonAotCompiler(util::ProcessRunner& runner, std::filesystem::path python,
                                     std::filesystem::path package_root,
                                     std::filesystem::path triton_path)
    : m_runner(runner), m_python(std::move(python)),
      m_package_root(package_root.empty() ? util::data_root() / "python" : std::move(package_root)),
      m_triton_path(std::move(triton_path)) {}

util::Expected<TritonAotResult> TritonAotCompiler::compile(std::string_view source,
                                                           const std::vector<TritonAotArg>& args,
                                                           Arch arch,
                                                           const util::TempFolder& out) const {
  const std::filesystem::path kernel = out.path() / "kernel.py";
  const std::filesystem::path spec = out.path() / "spec.json";
  const std::filesystem::path cubins = out.path() / "cubins";
  std::error_code ec;
  std::filesystem::create_directories(cubins, ec);
  PTXBENCH_TRY(util::write_file_atomic(kernel, source));
  PTXBENCH_TRY(util::write_file_atomic(spec, make_aot_spec(arch, args).dump()));
  util::ProcessOptions options;
  options.timeout = kAotTimeout;
  options.extra_env = {"TRITON_CACHE_DIR=" + (out.path() / "triton-cache").string(),
                       "TRITON_HOME=" + out.path().string()};
  PTXBENCH_TRY_ASSIGN(
      auto result,
      m_runner.run(
          {m_python.string(), "-I", "-B", "-c",
           "import sys; sys.path[:0] = [p for p in sys.argv[1:3] if p]; del sys.argv[1:3]; "
           "from ptxbench_triton.aot import main; sys.exit(main())",
           m_package_root.string(), m_triton_path.string(), kernel.string(), "--spec",
           spec.string(), "--out", cubins.string()},
          options));
  if (result.timed_out)
    return util::make_error(util::ErrorKind::timeout,
                            fmt::format("the Triton AOT compile did not finish in {} s",
                                        std::chrono::seconds(kAotTimeout).count()));
  if (!result.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("the Triton AOT compile ({} ptxbench_triton/aot.py) "
                                        "failed: {}",
                                        m_python.string(), result.err));
  return parse_aot_output(result.out);
}

} // namespace ptxbench::compile
