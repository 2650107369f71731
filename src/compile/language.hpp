// The candidate language: CUDA (.cu, the C ABI of docs/abi.md) or Triton (.py, a destination-
// passing `run` on torch tensors). A dimension of runs, trajectories and reports; persisted
// through trace::Language, the FlashInfer-Trace spelling.
#pragma once

#include "trace/schema.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxbench::compile {

enum class Language : std::uint8_t { cuda = 1, triton = 2 };

std::string_view to_string(Language language);
// "cuda" or "triton"; nullopt for anything else.
std::optional<Language> parse_language(std::string_view text);

trace::Language to_trace(Language language);
// nullopt for a FlashInfer-Trace language that is no candidate language here (python, cpp...).
std::optional<Language> from_trace(trace::Language language);

// The candidate's file name and entry point in a FlashInfer-Trace solution.
std::string_view kernel_file_name(Language language); // "kernel.cu", "kernel.py"
std::string_view entry_point(Language language);      // "kernel.cu::run", "kernel.py::run"

} // namespace ptxbench::compile
