#include "frontend/check_report.hpp"

#include "frontend/frontend.hpp"

#include <fmt/format.h>

namespace ptxbench::frontend {
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

} // namespace

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

nlohmann::ordered_json to_json(const CheckReport& report) {
  return to_json(report, of(report.language));
}

std::string render_text(const CheckReport& report) {
  return render_text(report, of(report.language));
}

nlohmann::ordered_json to_json(const CheckReport& report, const Frontend& language) {
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
  language.add_check_json(report, out);
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

std::string render_text(const CheckReport& report, const Frontend& language) {
  std::string out = fmt::format("problem   {}\narch      {}\nsignature {}\n", report.problem,
                                compile::to_string(report.arch), report.signature);
  return out + language.check_text(report);
}

} // namespace ptxbench::frontend
