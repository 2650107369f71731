#include "frontend/triton/aot_report.hpp"

#include "util/temp_folder.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ptxbench::frontend {
namespace {

using Json = nlohmann::ordered_json;

std::variant<std::int64_t, double, bool> scalar_value(const suite::Problem& problem,
                                                      const suite::ResolvedTensor& tensor) {
  for (const auto& [name, spec] : problem.workload.inputs)
    if (name == tensor.name)
      if (const auto* scalar = std::get_if<trace::ScalarInput>(&spec))
        return scalar->value;
  switch (tensor.dtype) {
  case trace::DType::float32:
  case trace::DType::float16:
  case trace::DType::bfloat16:
    return 1.0;
  case trace::DType::boolean:
    return true;
  default:
    return std::int64_t{1};
  }
}

compile::TritonAotArg tensor_arg(const suite::ResolvedTensor& tensor) {
  return {tensor.name, tensor.dtype, tensor.dims, std::int64_t{0}};
}

Json launch_json(const compile::TritonAotLaunch& launch) {
  return {{"kernel", launch.kernel},
          {"function", launch.function},
          {"cubin", launch.cubin.filename().string()},
          {"grid", launch.grid},
          {"num_warps", launch.num_warps},
          {"num_stages", launch.num_stages},
          {"shared_bytes", launch.shared_bytes},
          {"constexprs", launch.constexprs},
          {"autotune", launch.autotune.empty() ? Json(nullptr) : Json(launch.autotune)}};
}

std::string constexprs_text(const Json& constexprs) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : constexprs.items())
    parts.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string launch_text(const compile::TritonAotLaunch& launch) {
  std::string out = fmt::format("  {} grid [{}], {} warps, {} stages, {} B shared", launch.kernel,
                                fmt::join(launch.grid, ", "), launch.num_warps, launch.num_stages,
                                launch.shared_bytes);
  if (!launch.constexprs.empty())
    out += "; " + constexprs_text(launch.constexprs);
  if (!launch.autotune.empty())
    out += "\n    autotuned: " + launch.autotune;
  return out + "\n";
}

std::string aot_verdict_text(const TritonSassReport& report) {
  const auto verdict = report.verdict();
  if (!verdict)
    return "";
  const sass::ArchReport* arch = sass::find_arch(*report.sass, compile::to_string(report.arch));
  std::string families; // none when the cubins hold no code for the arch (verdict absent)
  if (arch != nullptr)
    for (sass::Family family : arch->target_families)
      families += fmt::format("{}{} {}", families.empty() ? "" : ", ", sass::to_string(family),
                              arch->totals[sass::index_of(family)]);
  return fmt::format("static verdict ({}, AOT specialisation): target instructions {} [{}]\n",
                     compile::to_string(report.arch), sass::to_string(*verdict), families);
}

} // namespace

std::optional<sass::Verdict> TritonSassReport::verdict() const {
  if (!sass)
    return std::nullopt;
  const sass::ArchReport* found = sass::find_arch(*sass, compile::to_string(arch));
  return found == nullptr ? sass::Verdict::absent : found->verdict;
}

std::vector<compile::TritonAotArg> triton_aot_args(const suite::Problem& problem) {
  std::vector<compile::TritonAotArg> args;
  for (const auto& input : problem.inputs)
    args.push_back(
        input.scalar
            ? compile::TritonAotArg{input.name, std::nullopt, {}, scalar_value(problem, input)}
            : tensor_arg(input));
  for (const auto& output : problem.outputs)
    args.push_back(tensor_arg(output));
  for (const auto& [name, value] : problem.var_axes)
    args.push_back({name, std::nullopt, {}, value});
  return args;
}

util::Expected<TritonSassReport> triton_sass_report(std::string_view source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch,
                                                    const compile::TritonAotCompiler& compiler,
                                                    const sass::Disassembler& disassembler) {
  PTXBENCH_TRY_ASSIGN(auto folder,
                      util::TempFolder::make("ptxbench-aot", "the Triton AOT compile"));
  PTXBENCH_TRY_ASSIGN(auto aot, compiler.compile(source, triton_aot_args(problem), arch, folder));
  TritonSassReport report{arch, std::move(aot), std::nullopt};
  if (report.aot.outcome != compile::TritonAotOutcome::ok)
    return report;
  PTXBENCH_TRY_ASSIGN(auto sass, sass::analyze_binaries(disassembler, report.aot.cubins()));
  report.sass = std::move(sass);
  return report;
}

Json to_json(const TritonSassReport& report) {
  Json launches = Json::array();
  for (const auto& launch : report.aot.launches)
    launches.push_back(launch_json(launch));
  const auto verdict = report.verdict();
  return {{"arch", compile::to_string(report.arch)},
          {"specialisation", "aot"},
          {"caveat", std::string(kAotCaveat)},
          {"outcome", compile::to_string(report.aot.outcome)},
          {"message", report.aot.message.empty() ? Json(nullptr) : Json(report.aot.message)},
          {"triton", report.aot.triton_version},
          {"launches", std::move(launches)},
          {"static_verdict", verdict ? Json(sass::to_string(*verdict)) : Json(nullptr)},
          {"sass", report.sass ? sass::to_json(*report.sass) : Json(nullptr)}};
}

std::string render_text(const TritonSassReport& report) {
  const std::string_view arch = compile::to_string(report.arch);
  switch (report.aot.outcome) {
  case compile::TritonAotOutcome::ok:
    break;
  case compile::TritonAotOutcome::compile_error:
    return fmt::format("{}: Triton could not compile a kernel that `run` launches:\n{}\n", arch,
                       report.aot.message);
  case compile::TritonAotOutcome::import_error:
    return fmt::format("{}: the module raised while being imported:\n{}\n", arch,
                       report.aot.message);
  case compile::TritonAotOutcome::cannot_specialise:
    return fmt::format("{}: no static SASS report without a GPU: {}\n", arch, report.aot.message);
  }
  std::string out = fmt::format("{}: {} kernel(s) compiled ahead of time by Triton {}\n", arch,
                                report.aot.launches.size(), report.aot.triton_version);
  for (const auto& launch : report.aot.launches)
    out += launch_text(launch);
  out += "note: " + std::string(kAotCaveat) + "\n\n";
  return out + sass::render_text(*report.sass) + "\n" + aot_verdict_text(report);
}

} // namespace ptxbench::frontend
