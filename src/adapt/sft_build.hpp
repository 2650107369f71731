// The build stage: SFT rows from repair pairs (Fixit) or correct kernels (KernelGen) and the
// rationales a reasoning teacher wrote for them (the original's build_sft_dataset_*.py).
//
// Fixit rows have five messages: the original system prompt, the original task prompt, the
// wrong kernel as the assistant wrote it (a ```cuda block, the form the agent loop asks for),
// the feedback that kernel got, and `<think>RATIONALE</think>` followed by the repaired kernel
// in a ```cuda block. KernelGen rows have three: system, task, `<think>RATIONALE</think>`
// followed by the teacher's original reply. step_loss_mask is 1 only on the last message.
//
// A record without a rationale of status "done" (the last one for its id wins), a rationale
// that still holds <my_reasoning> tags, or a row over --max-tokens (counted over the message
// texts joined by newlines; chat-template tokens are not included) is dropped, never
// truncated, and the manifest says why. Rows are ordered by sha256("<seed>:<id>"), a shuffle
// fixed by the seed. sft.jsonl carries {id, messages:[{role, content, step_loss_mask}],
// metadata}; messages.jsonl the same rows in OpenAI/TRL form ({"messages":[{role, content}]}).
#pragma once

#include "adapt/dataset.hpp"
#include "adapt/tokenizer.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::adapt {

struct BuildOptions {
  std::optional<std::int64_t> max_tokens; // none: no length filter
  std::uint64_t seed = 42;
};

struct BuildResult {
  std::int64_t rows = 0;
  std::int64_t dropped = 0;
  bool approximate_tokens = true;
  std::filesystem::path sft_file;
};

struct SftMessage {
  std::string role;
  std::string content;
  int step_loss_mask = 0;
};

// A code block as the agent loop asks for it.
std::string fenced_cuda(const std::string& source);

std::vector<SftMessage> fixit_messages(const PairRecord& pair, const std::string& reasoning);
std::vector<SftMessage> kernelgen_messages(const CorrectRecord& record,
                                           const std::string& reasoning);

// DIR/fixit/pairs/pairs.jsonl + DIR/fixit/synthesize/rationales.jsonl → DIR/fixit/build/.
util::Expected<BuildResult> build_fixit(const std::filesystem::path& dir,
                                        const BuildOptions& options, Tokenizer& tokenizer);
// DIR/kernelgen/collect/correct.jsonl + DIR/kernelgen/synthesize/rationales.jsonl →
// DIR/kernelgen/build/.
util::Expected<BuildResult> build_kernelgen(const std::filesystem::path& dir,
                                            const BuildOptions& options, Tokenizer& tokenizer);

} // namespace ptxbench::adapt
