// Built kernel.so files (untrusted bytes: the candidate decides what nvcc links): the ELF
// reader and the import rule. Invariant beyond "no crash, no out-of-bounds read": a file that
// reads has every name it lists non-empty or skipped, and the rule decides without error.
#include "compile/imports.hpp"

#include <cstdint>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto imports = ptxbench::compile::read_imports(
      std::as_bytes(std::span(reinterpret_cast<const char*>(data), size)));
  if (!imports) {
    if (imports.error().message.empty())
      std::abort();
    return 0;
  }
  if (auto forbidden = ptxbench::compile::find_forbidden_import(*imports))
    if (forbidden->message().empty())
      std::abort();
  return 0;
}
