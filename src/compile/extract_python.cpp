// Taking a Triton candidate out of a model reply: the last complete ```python block. Complete
// means a top-level `def run(` and a `triton.jit` decorator; anything finer (the parameters,
// torch calls) is the Triton gate's business (triton_gate.hpp), which parses the code properly.
#include "compile/extract.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ptxbench::compile {
namespace {

constexpr std::string_view kNoPythonBlockMessage =
    "Could not extract a ```python code block from your response. Please provide your complete "
    "Triton kernel and its `run` function in a single ```python code block.";

std::string_view first_word_lower(std::string_view info, std::string& storage) {
  storage = std::string(info.substr(0, std::min(info.size(), info.find_first_of(" \t{"))));
  std::transform(storage.begin(), storage.end(), storage.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return storage;
}

// Each line of `code`, without its line end.
template <typename Visit> void for_each_line(std::string_view code, Visit visit) {
  std::size_t begin = 0;
  while (begin <= code.size()) {
    std::size_t end = code.find('\n', begin);
    if (end == std::string_view::npos)
      end = code.size();
    visit(code.substr(begin, end - begin));
    begin = end + 1;
  }
}

bool is_top_level_run(std::string_view line) {
  for (std::string_view prefix : {"def run(", "def run (", "async def run("})
    if (line.starts_with(prefix))
      return true;
  return false;
}

bool is_jit_decorator(std::string_view line) {
  std::size_t at = line.find_first_not_of(" \t");
  return at != std::string_view::npos && line.substr(at).starts_with("@triton.jit");
}

std::string missing_python_text(const PythonCompleteness& completeness) {
  if (completeness.missing_run && completeness.missing_kernel)
    return "has neither a top-level `def run(...)` nor a `@triton.jit` kernel";
  if (completeness.missing_run)
    return "does not define the top-level function `run(...)`";
  return "has no `@triton.jit` kernel";
}

} // namespace

bool is_python_language(std::string_view info) {
  std::string storage;
  std::string_view lang = first_word_lower(info, storage);
  return lang == "python" || lang == "py" || lang == "python3" || lang == "triton";
}

PythonCompleteness check_python_completeness(std::string_view code) {
  PythonCompleteness out{true, true};
  for_each_line(code, [&](std::string_view line) {
    if (is_top_level_run(line))
      out.missing_run = false;
    if (is_jit_decorator(line))
      out.missing_kernel = false;
  });
  return out;
}

util::Expected<Extraction> extract_python_candidate(std::string_view reply) {
  std::vector<CodeBlock> blocks = find_code_blocks(reply);
  std::size_t python_blocks = 0, complete_count = 0, chosen = blocks.size();
  PythonCompleteness last;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (!is_python_language(blocks[i].info))
      continue;
    ++python_blocks;
    last = check_python_completeness(blocks[i].code);
    if (last.complete()) {
      ++complete_count;
      chosen = i;
    }
  }
  if (python_blocks == 0) {
    std::string message(kNoPythonBlockMessage);
    if (!blocks.empty())
      message += fmt::format(" (Your response has {} fenced block(s), but none is labelled "
                             "python or py.)",
                             blocks.size());
    return util::make_error(util::ErrorKind::extraction, std::move(message));
  }
  if (complete_count == 0)
    return util::make_error(
        util::ErrorKind::extraction,
        fmt::format("Found {} ```python code block(s) in your response, but none is a complete "
                    "candidate: the last one {}. Please provide your complete Triton kernel and "
                    "its `run` function in a single ```python code block.",
                    python_blocks, missing_python_text(last)));
  auto notes = selection_notes(blocks[chosen], chosen, complete_count);
  return Extraction{std::move(blocks[chosen].code), chosen, blocks.size(), std::move(notes)};
}

} // namespace ptxbench::compile
