#include "compile/triton_aot.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/json.hpp"
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

util::Expected<TritonAotLaunch> parse_launch(const util::Json& item) {
  if (!item.is_object() || !item.value("kernel", util::Json()).is_string() ||
      !item.value("function", util::Json()).is_string() ||
      !item.value("cubin", util::Json()).is_string())
    return aot_bad_output("with a malformed launch");
  TritonAotLaunch launch;
  launch.kernel = item["kernel"].get<std::string>();
  launch.function = item["function"].get<std::string>();
  launch.cubin = item["cubin"].get<std::string>();
  if (item.value("grid", util::Json()).is_array())
    for (const auto& g : item["grid"])
      if (g.is_number_integer())
        launch.grid.push_back(g.get<std::int64_t>());
  launch.num_warps = item.value("num_warps", 0);
  launch.num_stages = item.value("num_stages", 0);
  launch.shared_bytes = item.value("shared_bytes", std::int64_t{0});
  launch.constexprs = nlohmann::ordered_json::object();
  if (item.value("constexprs", util::Json()).is_object())
    for (const auto& [key, value] : item["constexprs"].items())
      launch.constexprs[key] = value;
  if (const auto& tune = item.value("autotune", util::Json()); tune.is_object())
    launch.autotune = fmt::format("first of {} configurations: {}", tune.value("configs", 0),
                                  tune.value("config", std::string()));
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
  util::Json parsed = util::Json::parse(json, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object() ||
      !parsed.value("ok", util::Json()).is_boolean())
    return aot_bad_output("with something that is not its JSON");
  TritonAotResult result;
  if (!parsed["ok"].get<bool>()) {
    const std::string stage = parsed.value("stage", std::string());
    const std::string message = parsed.value("message", std::string());
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
  result.triton_version = parsed.value("triton", std::string());
  if (!parsed.value("launches", util::Json()).is_array() || parsed["launches"].empty())
    return aot_bad_output("ok without launches");
  for (const auto& item : parsed["launches"]) {
    auto launch = parse_launch(item);
    PTXBENCH_TRY(launch);
    result.launches.push_back(std::move(*launch));
  }
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
  auto kernel_written = util::write_file_atomic(kernel, source);
  PTXBENCH_TRY(kernel_written);
  auto spec_written = util::write_file_atomic(spec, make_aot_spec(arch, args).dump());
  PTXBENCH_TRY(spec_written);
  util::ProcessOptions options;
  options.timeout = kAotTimeout;
  options.extra_env = {"TRITON_CACHE_DIR=" + (out.path() / "triton-cache").string(),
                       "TRITON_HOME=" + out.path().string()};
  auto result = m_runner.run(
      {m_python.string(), "-I", "-B", "-c",
       "import sys; sys.path[:0] = [p for p in sys.argv[1:3] if p]; del sys.argv[1:3]; "
       "from ptxbench_triton.aot import main; sys.exit(main())",
       m_package_root.string(), m_triton_path.string(), kernel.string(), "--spec", spec.string(),
       "--out", cubins.string()},
      options);
  PTXBENCH_TRY(result);
  if (result->timed_out)
    return util::make_error(util::ErrorKind::timeout,
                            fmt::format("the Triton AOT compile did not finish in {} s",
                                        std::chrono::seconds(kAotTimeout).count()));
  if (!result->succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("the Triton AOT compile ({} ptxbench_triton/aot.py) "
                                        "failed: {}",
                                        m_python.string(), result->err));
  return parse_aot_output(result->out);
}

} // namespace ptxbench::compile
