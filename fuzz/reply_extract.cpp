// Model replies (untrusted text from a remote model): code-block search, completeness check and
// candidate extraction. Invariants checked beyond "no crash": an extracted candidate is one of
// the reply's fenced blocks and is complete.
#include "compile/extract.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view reply(reinterpret_cast<const char*>(data), size);
  const auto blocks = ptxbench::compile::find_code_blocks(reply);
  for (const auto& block : blocks)
    (void)ptxbench::compile::check_completeness(block.code);
  auto extraction = ptxbench::compile::extract_candidate(reply);
  if (extraction) {
    if (extraction->block_count != blocks.size() || extraction->block_index >= blocks.size())
      std::abort();
    if (blocks[extraction->block_index].code != extraction->code)
      std::abort();
    if (!ptxbench::compile::check_completeness(extraction->code).complete())
      std::abort();
  } else if (extraction.error().message.empty()) {
    std::abort(); // the model is told why; an empty reason is a bug
  }
  return 0;
}
