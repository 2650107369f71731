#include "exec/check.hpp"

#include <fmt/format.h>

namespace ptxbench::exec {
namespace {

using Json = nlohmann::ordered_json;

Json kernels_json(const std::vector<compile::KernelResources>& kernels) {
  Json out = Json::array();
  for (const auto& k : kernels) {
    out.push_back({{"name", k.demangled_name},
                   {"registers", k.registers},
                   {"spill_store_bytes", k.spill_store_bytes},
                   {"spill_load_bytes", k.spill_load_bytes},
                   {"stack_frame_bytes", k.stack_frame_bytes},
                   {"smem_bytes", k.smem_bytes},
                   {"barriers", k.barriers}});
  }
  return out;
}

Json build_json(const compile::CompileResult& build) {
  return {{"ok", build.ok},
          {"cache_hit", build.cache_hit},
          {"compile_ms", build.compile_time.count()},
          {"first_errors", build.first_errors},
          {"diagnostic", build.diagnostic},
          {"kernels", kernels_json(build.kernels)},
          {"log", build.log}};
}

std::string kernels_text(const std::vector<compile::KernelResources>& kernels) {
  if (kernels.empty())
    return "";
  std::string out = fmt::format("  {:<48} {:>5} {:>13} {:>10} {:>8}\n", "kernel (ptxas)", "regs",
                                "spill st/ld B", "smem B", "stack B");
  for (const auto& k : kernels) {
    std::string name =
        k.demangled_name.size() > 48 ? k.demangled_name.substr(0, 45) + "..." : k.demangled_name;
    out += fmt::format("  {:<48} {:>5} {:>13} {:>10} {:>8}\n", name, k.registers,
                       fmt::format("{}/{}", k.spill_store_bytes, k.spill_load_bytes), k.smem_bytes,
                       k.stack_frame_bytes);
  }
  return out;
}

std::string verdict_text(const CheckReport& report) {
  auto verdict = report.verdict();
  if (!verdict)
    return "";
  const sass::ArchReport* arch = sass::find_arch(*report.sass, compile::to_string(report.arch));
  std::string families;
  for (sass::Family family : arch->target_families) {
    std::size_t count = arch->totals[sass::index_of(family)];
    families +=
        fmt::format("{}{} {}", families.empty() ? "" : ", ", sass::to_string(family), count);
  }
  return fmt::format("static verdict ({}): target instructions {} [{}]\n",
                     compile::to_string(report.arch), sass::to_string(*verdict), families);
}

} // namespace

std::string_view to_string(CheckOutcome outcome) {
  switch (outcome) {
  case CheckOutcome::ok:
    return "ok";
  case CheckOutcome::banned_library:
    return "banned_library";
  case CheckOutcome::compile_error:
    return "compile_error";
  }
  return "unknown";
}

std::string CheckReport::banned_message() const {
  if (outcome != CheckOutcome::banned_library)
    return "";
  if (triton_gate)
    return "rejected by the Triton gate:\n" + compile::render_text(*triton_gate);
  if (banned)
    return banned->message();
  return forbidden ? forbidden->message() : "ERROR: banned-library rule";
}

std::optional<sass::Verdict> CheckReport::verdict() const {
  if (!sass)
    return std::nullopt;
  const sass::ArchReport* arch_report = sass::find_arch(*sass, compile::to_string(arch));
  if (arch_report == nullptr)
    return sass::Verdict::absent;
  return arch_report->verdict;
}

util::Expected<CheckReport> Checker::check(const std::string& source, const suite::Problem& problem,
                                           compile::Arch arch) const {
  util::PhaseLog phases;
  auto signature = compile::make_signature(problem.definition);
  PTXBENCH_TRY(signature);
  CheckReport report;
  report.problem = problem.name();
  report.arch = arch;
  report.signature = signature->one_line();
  report.banned = phases.time("gate", [&] { return compile::find_banned_library(source); });
  if (report.banned) {
    report.outcome = CheckOutcome::banned_library;
    report.phases = phases.phases();
    return report;
  }
  auto build = phases.time("compile", [&] {
    return m_compiler.compile(compile::CompileRequest::for_candidate(source, *signature, arch));
  });
  PTXBENCH_TRY(build);
  report.build = std::move(*build);
  if (!report.build->ok) {
    report.outcome = CheckOutcome::compile_error;
    report.phases = phases.phases();
    return report;
  }
  if (m_imports == ImportCheck::enforce) {
    auto imports =
        phases.time("imports", [&] { return compile::read_imports(report.build->library); });
    PTXBENCH_TRY(imports);
    report.forbidden = compile::find_forbidden_import(*imports);
    if (report.forbidden) {
      report.outcome = CheckOutcome::banned_library;
      report.phases = phases.phases();
      return report;
    }
  }
  auto sass_report = phases.time(
      "sass", [&] { return sass::analyze_binary(m_disassembler, report.build->library); });
  PTXBENCH_TRY(sass_report);
  report.sass = std::move(*sass_report);
  report.phases = phases.phases();
  return report;
}

nlohmann::ordered_json to_json(const CheckReport& report) {
  Json out{{"problem", report.problem},
           {"arch", compile::to_string(report.arch)},
           {"signature", report.signature},
           {"outcome", to_string(report.outcome)}};
  out["banned_library"] = report.banned
                              ? Json{{"library", compile::display_name(report.banned->library)},
                                     {"line", report.banned->line},
                                     {"message", report.banned->message()}}
                              : Json(nullptr);
  out["forbidden_import"] = report.forbidden
                                ? Json{{"rule", compile::to_string(report.forbidden->rule)},
                                       {"name", report.forbidden->name},
                                       {"message", report.forbidden->message()}}
                                : Json(nullptr);
  out["build"] = report.build ? build_json(*report.build) : Json(nullptr);
  if (report.language == compile::Language::triton) {
    out["language"] = "triton";
    Json findings = Json::array();
    if (report.triton_gate)
      for (const compile::TritonFinding& f : report.triton_gate->findings)
        findings.push_back({{"rule", f.rule}, {"line", f.line}, {"message", f.message}});
    out["triton_gate"] = findings;
  }
  auto verdict = report.verdict();
  out["static_verdict"] = verdict ? Json(sass::to_string(*verdict)) : Json(nullptr);
  out["sass"] = report.sass ? sass::to_json(*report.sass) : Json(nullptr);
  Json phases = Json::array();
  for (const auto& phase : report.phases)
    phases.push_back(
        {{"name", phase.name}, {"ms", static_cast<double>(phase.elapsed.count()) / 1000.0}});
  out["phases"] = phases;
  return out;
}

std::string render_text(const CheckReport& report) {
  std::string out = fmt::format("problem   {}\narch      {}\nsignature {}\n", report.problem,
                                compile::to_string(report.arch), report.signature);
  if (report.language == compile::Language::triton)
    return out + (report.triton_gate && !report.triton_gate->ok()
                      ? "gate      REJECTED by the Triton gate\n" +
                            compile::render_text(*report.triton_gate)
                      : std::string("gate      ok (the Triton gate passed)\n"));
  if (report.banned) {
    return out + fmt::format("gate      REJECTED (line {}: {})\n{}\n", report.banned->line,
                             report.banned->excerpt, report.banned->message());
  }
  out += "gate      ok (no banned library)\n";
  const auto& build = *report.build;
  out += fmt::format("compile   {} ({}{} ms)\n", build.ok ? "ok" : "FAILED",
                     build.cache_hit ? "cache hit, built in " : "", build.compile_time.count());
  if (!build.ok) {
    if (!build.diagnostic_restates_first_error())
      out += build.diagnostic + "\n";
    for (const auto& error : build.first_errors)
      out += error + "\n";
    return out;
  }
  if (report.forbidden)
    return out + fmt::format("imports   REJECTED ({} `{}`)\n{}\n",
                             compile::to_string(report.forbidden->rule), report.forbidden->name,
                             report.forbidden->message());
  out += kernels_text(build.kernels) + "\n" + sass::render_text(*report.sass) + "\n";
  return out + verdict_text(report);
}

} // namespace ptxbench::exec
