#include "frontend/frontend.hpp"

#include "frontend/cuda/cuda_frontend.hpp"
#include "frontend/triton/triton_frontend.hpp"

#include <array>

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
