// Taking the candidate kernel out of a model reply (Markdown with fenced code blocks).
#pragma once

#include "compile/language.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

struct CodeBlock {
  std::string info;     // the fence's info string, trimmed ("cpp", "CUDA title=x", ...)
  std::string code;     // content with "\n" line ends, fence indentation removed
  std::size_t line = 0; // 1-based line of the opening fence in the reply
  bool closed = true;   // false when the reply ended inside the block
};

// Every fenced block (``` or ~~~) of the reply, in order, whatever its language.
std::vector<CodeBlock> find_code_blocks(std::string_view reply);

// The fence the system prompt, the feedback and the extraction errors ask for; extraction
// takes a block in any of kCudaLanguages (is_cuda_language).
inline constexpr std::string_view kCodeFence = "```cuda";
// The fence a Triton candidate's reply is asked for.
inline constexpr std::string_view kPythonCodeFence = "```python";
inline constexpr std::string_view kCudaLanguages = "cpp, c++, cuda or cu";

// True when the info string names C++ or CUDA: one of kCudaLanguages (any case).
bool is_cuda_language(std::string_view info);

// What a block lacks to be a complete candidate; both false means complete.
struct Completeness {
  bool missing_run = false;    // no definition `... run(...) {`
  bool missing_kernel = false; // no __global__, no <<<...>>> and no launch API call
  bool complete() const { return !missing_run && !missing_kernel; }
};
Completeness check_completeness(std::string_view code);

struct Extraction {
  std::string code;
  std::size_t block_index = 0;    // 0-based among all fenced blocks of the reply
  std::size_t block_count = 0;    // fenced blocks in the reply
  std::vector<std::string> notes; // e.g. which of several complete blocks was taken
};

// The last complete cpp/c++/cuda/cu block. Error{extraction} with feedback for the model when
// there is no such block.
util::Expected<Extraction> extract_candidate(std::string_view reply);

// True when the info string names Python: python, py, python3 or triton (any case).
bool is_python_language(std::string_view info);

// What a Python block lacks to be a Triton candidate: a top-level `def run(` and an
// `@triton.jit` decorator.
struct PythonCompleteness {
  bool missing_run = false;
  bool missing_kernel = false;
  bool complete() const { return !missing_run && !missing_kernel; }
};
PythonCompleteness check_python_completeness(std::string_view code);

// The last complete python/py block; Error{extraction} worded for a Triton candidate otherwise.
util::Expected<Extraction> extract_python_candidate(std::string_view reply);

// The notes on the chosen block (which of several complete ones, an unclosed fence).
std::vector<std::string> selection_notes(const CodeBlock& chosen, std::size_t index,
                                         std::size_t complete_count);

} // namespace ptxbench::compile
