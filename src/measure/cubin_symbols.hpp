// Function names defined by a cubin (an ELF64 image), read from its symbol table. The CUPTI
// timer uses them to say which loaded module a kernel record's function came from.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace ptxbench::measure {

// Names of the STT_FUNC symbols of `image`; empty when it is not a well-formed ELF64 file.
std::vector<std::string> cubin_function_names(std::span<const std::byte> image);

} // namespace ptxbench::measure
