#include "frontend/frontend.hpp"

#include "frontend/cuda/cuda_frontend.hpp"
#include "frontend/triton/triton_frontend.hpp"

#include <array>
#include <fmt/format.h>

namespace ptxbench::frontend {
namespace {

struct Row {
  compile::Language language;
  const Frontend* frontend;
};

const CudaFrontend kCuda;
const TritonFrontend kTriton;

// In compile::Language's value order; a language is a folder and a row here.
const std::array kFrontends{Row{compile::Language::cuda, &kCuda},
                            Row{compile::Language::triton, &kTriton}};

} // namespace

const Frontend& of(compile::Language language) {
  for (const Row& row : kFrontends)
    if (row.language == language)
      return *row.frontend;
  throw util::Fatal("no frontend for the language " + std::string(compile::to_string(language)));
}

util::Expected<compile::Language> language_for(std::string_view name, std::string_view file) {
  if (!name.empty()) {
    if (auto language = compile::parse_language(name))
      return *language;
    std::string known;
    for (const Row& row : kFrontends)
      known += (known.empty() ? "" : " or ") + std::string(row.frontend->name());
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("--language must be {}, not '{}'", known, name));
  }
  for (const Row& row : kFrontends)
    if (!row.frontend->file_extension().empty() && file.ends_with(row.frontend->file_extension()))
      return row.language;
  return compile::Language::cuda;
}

util::Expected<std::string> Frontend::system_prompt(const suite::Problem& problem,
                                                    std::string_view pack_text,
                                                    compile::Arch arch) const {
  PTXBENCH_TRY_ASSIGN(auto signature, prompt_signature(problem));
  std::string out(m_facts.instructions);
  if (!pack_text.empty())
    out += fmt::format("\n\n# {}\n\n{}", m_facts.knowledge_title, pack_text);
  out += fmt::format("\n\n# Required signature\n\n{}\n{}\n```\n", m_facts.fence, signature);
  out +=
      fmt::format("\nTarget architecture: {} ({}).\n", compile::to_string(arch), build_note(arch));
  return out;
}

util::Expected<std::string> Frontend::repair_prompt(std::string_view task,
                                                    const suite::Problem& problem,
                                                    std::string_view wrong_kernel,
                                                    std::string_view error_log) const {
  PTXBENCH_TRY_ASSIGN(auto rules, repair_rules(problem));
  return fmt::format("Task:\n{}\n\nKernel\n\n{}\n{}\n```\nError Message\n\n{}\n"
                     "Your task is to fix the {} kernel with the minimal change. The kernel "
                     "implements the given PyTorch reference.\n\n{}",
                     without_final_newlines(task), m_facts.fence,
                     without_final_newlines(wrong_kernel), without_final_newlines(error_log),
                     m_facts.kernel_noun, rules);
}

util::Expected<CommandCheck> Frontend::command_check(const CheckTools& tools,
                                                     const std::string& source,
                                                     const suite::Problem& problem,
                                                     std::span<const compile::Arch> arches,
                                                     std::string_view /*file*/) const {
  CommandCheck out{nlohmann::ordered_json::array(), "", CommandVerdict::pass};
  for (const compile::Arch arch : arches) {
    PTXBENCH_TRY_ASSIGN(auto checked, check(tools, source, problem, arch));
    const CheckReport& report = checked.report;
    if (report.outcome != CheckOutcome::ok || report.verdict() == sass::Verdict::absent)
      out.verdict = CommandVerdict::fail;
    out.json.push_back(to_json(report, *this));
    out.text += (out.text.empty() ? "" : "\n") + render_text(report, *this);
  }
  return out;
}

std::string_view without_final_newlines(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
    text.remove_suffix(1);
  return text;
}

ChildCommand candidate_binary_command(const ChildPaths& paths, std::vector<std::string> words) {
  ChildCommand command;
  if (words.empty())
    return command;
  words.front() = paths.candidate_binary.string();
  command.argv = std::move(words);
  return command;
}

} // namespace ptxbench::frontend
