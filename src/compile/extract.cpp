// Problem: a model reply is Markdown of any size and any bytes; the candidate is one fenced
// block somewhere in it, possibly next to snippets, an earlier draft, or a reply cut off
// before its closing fence. The original PTXBench used one regex for ```cpp blocks only.
//
// Approach: one line-by-line pass finds every fenced block (``` or ~~~, CommonMark-style:
// the closing fence uses the opening character at least as many times and nothing else). A
// reply that ends inside a block closes it. "\r\n" line ends become "\n". Among blocks labelled
// cpp, c++, cuda or cu, a block is complete when, outside comments and literals, it defines a
// free function `run(...) {` and has a kernel (`__global__`, a `<<<` launch or a launch API
// call). The last complete block wins — models tend to put the final version last — and a note
// says so when there were several.
//
// Invariants: bytes are never decoded (invalid UTF-8 is just bytes); every step is linear in
// the reply (the `run(...) {` check matches parentheses with a stack, never rescans).
#include "compile/extract.hpp"

#include "compile/source_text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

namespace ptxbench::compile {
namespace {

std::string no_block_message() {
  return fmt::format("Could not extract a {0} code block from your response. Please provide "
                     "your complete CUDA kernel in a single {0} code block.",
                     kCodeFence);
}

struct Fence {
  char marker = '`';
  std::size_t length = 0;
  std::size_t indent = 0;
  std::string_view info;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}

std::size_t leading_blanks(std::string_view line) {
  std::size_t k = 0;
  while (k < line.size() && (line[k] == ' ' || line[k] == '\t'))
    ++k;
  return k;
}

std::optional<Fence> parse_fence(std::string_view line) {
  std::size_t indent = leading_blanks(line);
  if (indent >= line.size() || (line[indent] != '`' && line[indent] != '~'))
    return std::nullopt;
  char marker = line[indent];
  std::size_t end = indent;
  while (end < line.size() && line[end] == marker)
    ++end;
  if (end - indent < 3)
    return std::nullopt;
  std::string_view info = trim(line.substr(end));
  if (marker == '`' && info.find('`') != std::string_view::npos)
    return std::nullopt;
  return Fence{marker, end - indent, indent, info};
}

bool closes(const Fence& open, std::string_view line) {
  auto fence = parse_fence(line);
  return fence && fence->marker == open.marker && fence->length >= open.length &&
         fence->info.empty();
}

std::string_view drop_indent(std::string_view line, std::size_t indent) {
  return line.substr(std::min(indent, leading_blanks(line)));
}

void scan_blocks(std::string_view reply, std::vector<CodeBlock>& blocks) {
  std::optional<Fence> open;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < reply.size();) {
    std::size_t end = std::min(reply.find('\n', start), reply.size());
    std::string_view line = reply.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    start = end + 1;
    ++line_number;
    if (!open) {
      open = parse_fence(line);
      if (open)
        blocks.push_back({std::string(open->info), {}, line_number, false});
    } else if (closes(*open, line)) {
      blocks.back().closed = true;
      open.reset();
    } else {
      blocks.back().code.append(drop_indent(line, open->indent)).push_back('\n');
    }
  }
}

bool is_launch_api(std::string_view word) {
  return word == "cudaLaunchKernel" || word == "cudaLaunchKernelEx" ||
         word == "cudaLaunchKernelExC" || word == "cudaLaunchCooperativeKernel" ||
         word == "cuLaunchKernel" || word == "cuLaunchKernelEx" ||
         word == "cuLaunchCooperativeKernel";
}

bool has_kernel(std::string_view code) {
  if (code.find("<<<") != std::string_view::npos)
    return true;
  bool found = false;
  for_each_word(code, [&](const Word& word) {
    found = word.text == "__global__" || is_launch_api(word.text);
    return !found;
  });
  return found;
}

bool member_access_before(std::string_view code, std::size_t offset) {
  std::size_t k = offset;
  while (k > 0 && is_space(code[k - 1]))
    --k;
  return k > 0 && (code[k - 1] == '.' || code[k - 1] == '>' || code[k - 1] == ':');
}

// A free function named `run` with a body: `run` `(`...matching `)` `{`.
bool defines_run(std::string_view code) {
  std::vector<bool> open_parens; // per open '(': does it follow a free `run`?
  bool after_run = false;
  for (std::size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (is_ident_char(c)) {
      std::size_t end = i;
      while (end < code.size() && is_ident_char(code[end]))
        ++end;
      after_run = code.substr(i, end - i) == "run" && !member_access_before(code, i);
      i = end - 1;
    } else if (c == '(') {
      open_parens.push_back(after_run);
      after_run = false;
    } else if (c == ')' && !open_parens.empty()) {
      bool was_run = open_parens.back();
      open_parens.pop_back();
      if (was_run && next_non_space(code, i + 1) == '{')
        return true;
    } else if (!is_space(c)) {
      after_run = false;
    }
  }
  return false;
}

std::string missing_text(const Completeness& completeness) {
  if (completeness.missing_run && completeness.missing_kernel)
    return "has neither a host function `run(...)` nor a kernel";
  if (completeness.missing_run)
    return "does not define the host function `run(...)`";
  return "has no kernel (no __global__ function, <<<...>>> launch or launch API call)";
}

util::Error incomplete_error(std::size_t cuda_blocks, std::size_t all_blocks,
                             const Completeness& last) {
  const std::string others = all_blocks > cuda_blocks ? fmt::format(" (and {} in another language)",
                                                                    all_blocks - cuda_blocks)
                                                      : "";
  return util::make_error(
      util::ErrorKind::extraction,
      fmt::format("Found {} code block(s) labelled {}{} in your response, but none is a complete "
                  "kernel: the last one {}. Please provide your complete CUDA kernel and its "
                  "host `run` function in a single {} code block.",
                  cuda_blocks, kCudaLanguages, others, missing_text(last), kCodeFence));
}

util::Error no_block_error(std::size_t other_blocks) {
  std::string message = no_block_message();
  if (other_blocks > 0)
    message += fmt::format(" (Your response has {} fenced block(s), but none is labelled {}.)",
                           other_blocks, kCudaLanguages);
  return util::make_error(util::ErrorKind::extraction, std::move(message));
}

} // namespace

std::vector<std::string> selection_notes(const CodeBlock& chosen, std::size_t index,
                                         std::size_t complete_count) {
  std::vector<std::string> notes;
  if (complete_count > 1)
    notes.push_back(fmt::format("The response has {} complete code blocks; the last one (line {}) "
                                "was used.",
                                complete_count, chosen.line));
  if (!chosen.closed)
    notes.push_back(fmt::format("Code block {} (line {}) has no closing fence; it was taken to "
                                "run to the end of the response.",
                                index + 1, chosen.line));
  return notes;
}

std::vector<CodeBlock> find_code_blocks(std::string_view reply) {
  std::vector<CodeBlock> blocks;
  scan_blocks(reply, blocks);
  return blocks;
}

bool is_cuda_language(std::string_view info) {
  std::string_view first = info.substr(0, std::min(info.size(), info.find_first_of(" \t{")));
  std::string lang(first);
  std::transform(lang.begin(), lang.end(), lang.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return lang == "cpp" || lang == "c++" || lang == "cuda" || lang == "cu";
}

Completeness check_completeness(std::string_view code) {
  std::string view = strip_comments(code, Literals::blank);
  return Completeness{!defines_run(view), !has_kernel(view)};
}

util::Expected<Extraction> extract_candidate(std::string_view reply) {
  std::vector<CodeBlock> blocks = find_code_blocks(reply);
  std::size_t cuda_blocks = 0, complete_count = 0, chosen = blocks.size();
  Completeness last;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (!is_cuda_language(blocks[i].info))
      continue;
    ++cuda_blocks;
    last = check_completeness(blocks[i].code);
    if (last.complete()) {
      ++complete_count;
      chosen = i;
    }
  }
  if (cuda_blocks == 0)
    return no_block_error(blocks.size());
  if (complete_count == 0)
    return incomplete_error(cuda_blocks, blocks.size(), last);
  auto notes = selection_notes(blocks[chosen], chosen, complete_count);
  return Extraction{std::move(blocks[chosen].code), chosen, blocks.size(), std::move(notes)};
}

} // namespace ptxbench::compile
