#include "exec/check.hpp"

namespace ptxbench::exec {

util::Expected<frontend::Checked> Checker::check(const frontend::Frontend& language,
                                                 const std::string& source,
                                                 const suite::Problem& problem,
                                                 compile::Arch arch) const {
  return language.check(tools(m_runner), source, problem, arch);
}

util::Expected<CheckReport> Checker::check(const std::string& source, const suite::Problem& problem,
                                           compile::Arch arch) const {
  PTXBENCH_TRY_ASSIGN(auto checked,
                      check(frontend::of(compile::Language::cuda), source, problem, arch));
  return std::move(checked.report);
}

frontend::CheckTools Checker::tools(util::ProcessRunner& runner, std::filesystem::path python,
                                    std::filesystem::path python_root) const {
  return frontend::CheckTools{m_compiler, m_disassembler,    runner,
                              m_imports,  std::move(python), std::move(python_root)};
}

} // namespace ptxbench::exec
