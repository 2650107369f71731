// Reading nvcc's output: ptxas resource usage (-Xptxas -v) per kernel, the first errors that
// matter, and the link error that means `run` has the wrong signature.
#pragma once

#include "util/error.hpp"
#include "util/json.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

// One entry function as ptxas reports it.
struct KernelResources {
  std::string mangled_name;
  std::string demangled_name; // equals mangled_name when it does not demangle
  std::string arch;           // "sm_90a"
  int registers = 0;
  int barriers = 0;
  std::int64_t stack_frame_bytes = 0;
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
  std::int64_t smem_bytes = 0;
  std::int64_t cmem_bytes = 0; // all constant banks together
};

std::vector<KernelResources> parse_ptxas_info(std::string_view log);

// The C++ name of an Itanium-mangled symbol; the input unchanged when it does not demangle.
std::string demangle(const std::string& mangled);

// Error lines of the compiler, assembler and linker in log order, each with the source and
// caret lines the front end prints under it; duplicates and summary lines are dropped.
std::vector<std::string> first_errors(std::string_view log, std::size_t max_errors = 5);

// When the link failed because the shim's call to `run` found no definition, a message for the
// model that quotes `expected_signature`; nullopt otherwise.
std::optional<std::string> run_link_diagnostic(std::string_view log,
                                               std::string_view expected_signature);

nlohmann::json to_json(const std::vector<KernelResources>& kernels);
// The records to_json wrote; a missing or wrong-typed field is an invalid_input error naming
// `origin` and its JSON path ("ptxas.json: $[0].registers: expected an integer ...").
util::Expected<std::vector<KernelResources>> kernels_from_json(const util::Json& json,
                                                               const std::string& origin);

} // namespace ptxbench::compile
