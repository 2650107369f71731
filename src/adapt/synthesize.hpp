// Stage "synthesize" of Fixit and KernelGen: a reasoning teacher writes the rationale of every
// repaired pair (DIR/fixit/pairs/pairs.jsonl) or correct kernel (DIR/kernelgen/collect/
// correct.jsonl) into DIR/<kind>/synthesize/rationales.jsonl.
//
// Problem. Thousands of long, paid calls to a model that fails now and then, refuses the format
// or gives the kernel away; the process may be killed at any time, and a second call must
// neither pay twice for what is done nor leave two records of one id.
//
// Approach. Every input without a done RationaleRecord is a job; `concurrency` workers take
// jobs in input order. A job is up to `max_passes` model calls (each with the client's own HTTP
// retries, registry max_attempts): a reply is taken when extract_rationale accepts it, a refused
// or failed call costs a pass. The job's RationaleRecord — done, or failed with the last reason
// — is appended as one fsynced line; its tokens, cost (registry prices) and HTTP attempts add
// up every call it made. A job cut off by a stop request writes nothing.
//
// Invariants. Before any job runs, the file is rewritten (atomically) to its done records, one
// per id, when it holds anything else — failed records, a torn last line of a killed writer,
// a second record of an id — so failed ids run again and, since every job appends at most one
// line, no id ever has two records after a call. Done records are never touched.
#pragma once

#include "adapt/model_stage.hpp"
#include "adapt/rationale_prompt.hpp"
#include "util/error.hpp"

#include <filesystem>

namespace ptxbench::adapt {

struct SynthesizeOptions {
  std::filesystem::path data_dir; // DIR
  RationaleKind kind = RationaleKind::fixit;
  std::string reasoner; // registry name
  int concurrency = 8;
  int max_passes = 3;
  RationaleLimits limits;
};

struct SynthesizePaths {
  std::filesystem::path input;    // pairs.jsonl or correct.jsonl
  std::filesystem::path output;   // DIR/<kind>/synthesize/rationales.jsonl
  std::filesystem::path manifest; // DIR/<kind>/synthesize/manifest.json
};
SynthesizePaths synthesize_paths(const std::filesystem::path& data_dir, RationaleKind kind);

using SynthesizeDeps = ModelStageDeps;
using SynthesizeResult = ModelStageResult;

// Errors: the input is missing or bad, the reasoner is not in the registry or its client cannot
// be made, the output cannot be written.
util::Expected<SynthesizeResult> run_synthesize(const SynthesizeOptions& options,
                                                const SynthesizeDeps& deps);

} // namespace ptxbench::adapt
