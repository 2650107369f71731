// A candidate as the GPU evaluation meets it, once its language's static check passed: what the
// child loads, how that child is started, and where the candidate's machine code is (the SASS
// input of its target-instruction report). The evaluator (exec/) asks these and never the
// language; a Candidate owns the candidate's work folder, where the source was written once.
#pragma once

#include "compile/nvcc.hpp"
#include "frontend/check_report.hpp"
#include "sass/disassemble.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::frontend {

// What a language's static check may use; the caller owns each.
struct CheckTools {
  compile::Compiler& compiler;
  const sass::Disassembler& disassembler;
  util::ProcessRunner& runner; // Python subprocesses (the Triton gate)
  ImportCheck imports = ImportCheck::enforce;
  std::filesystem::path python = "python3"; // the interpreter that has torch and Triton
  std::filesystem::path python_root;        // the folder holding ptxbench_triton/ (empty: default)
};

// The programs and folders a child may need, as the evaluator found them.
struct ChildPaths {
  std::filesystem::path candidate_binary;   // ptxbench-candidate
  std::filesystem::path python = "python3"; // the interpreter that has torch and Triton
  std::filesystem::path python_root;        // the folder holding ptxbench_triton/
  std::filesystem::path child_library;      // libptxbench_child.so
  std::string inherited_pythonpath;         // the supervisor's $PYTHONPATH, kept after python_root
};

struct ChildCommand {
  std::vector<std::string> argv;
  std::vector<std::string> env; // overrides for util::environment_with ("NAME=value")
};

// The evaluator's own child, `ptxbench-candidate`, for the child command line `words`
// (protocol/child_arguments.hpp; its first word the program, which this replaces).
ChildCommand candidate_binary_command(const ChildPaths& paths, std::vector<std::string> words);

class Candidate {
public:
  virtual ~Candidate() = default;
  // What the child's `load` names: kernel.so, or the source file in the work folder.
  virtual std::filesystem::path library() const = 0;
  // The `load` request's binding of `run`'s parameters; empty when the child needs none.
  // invalid_input when the problem's definition cannot be bound.
  virtual util::Expected<std::string> binding() const = 0;
  // The command of the child that serves it, for the child command line `words`.
  virtual ChildCommand child_command(const ChildPaths& paths,
                                     std::vector<std::string> words) const = 0;
  // The SASS input when the check built nothing: the folder where the warm-up call of `load`
  // leaves the candidate's cubins (its compiler's cache); nullopt when the check built the
  // binary (kernel.so, whose report holds its SASS).
  virtual std::optional<std::filesystem::path> warm_up_cubins() const = 0;
};

// A static check's result: the report and, when it passed and the language evaluates on a GPU,
// the candidate the evaluation runs.
struct Checked {
  CheckReport report;
  std::unique_ptr<Candidate> candidate;
};

} // namespace ptxbench::frontend
