// Retrieval of repair notes for a failing kernel (reference §9.4, the original's
// note_feedback.py): which historical wrong kernels look like the one that just failed, and the
// notes written when they were fixed, as a Markdown block appended to the turn's feedback.
//
// Problem. The notes corpus (notes.jsonl of `fixit notes`) holds one record per repaired pair;
// one wrong kernel may have been fixed several times. Given the source of a kernel that just
// failed, find the few historical wrong kernels most like it — cheaply, with no model, and the
// same way every time — and show what was learned fixing them.
//
// Approach. Documents are token bags of comment-stripped source: tokens are the matches of
// [A-Za-z_][A-Za-z0-9_]*|\d+ (identifiers, keywords and PTX mnemonic parts; numbers), case
// kept; string and character literals stay in, comments (// and /* */, outside literals) go.
// Records are grouped by their wrong kernel's exact text; each group is one document. The
// candidates are the groups of the current problem (or, when definition prefixes are given,
// of every problem starting with one of them). Each candidate is scored by Okapi BM25 with
// k1 = 1.5, b = 0.75 against the current kernel as the query:
//   score(D) = Σ_{t ∈ distinct tokens of the query} idf(t) · f(t,D)·(k1+1) /
//              (f(t,D) + k1·(1 − b + b·|D|/avgdl))
//   idf(t) = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))
// with N the number of candidates, n(t) those containing t, |D| a document's token count and
// avgdl the candidates' mean. Each query token counts once (a kernel repeats `threadIdx`
// hundreds of times; counting repeats would let the commonest tokens decide), and this idf is
// never negative, so a shared token never lowers a score. The top_k groups with a score above
// min_similarity are kept, best first (ties: the group first seen in the corpus).
//
// Rendering. Mode 1 (notes): "## Retrieved repair notes from fixing similar historical wrong
// kernels", then per group "### Similar wrong kernel k: bm25=<3 decimals>, definition=<problem>,
// fixed_variants=<records in the group>" and its records' notes (best speedup first), numbered
// within the group, at most max_notes over the whole block. Mode 2 (notes and fixed kernel)
// opens "## Retrieved best fixed kernels and notes from fixing similar historical wrong
// kernels" and puts each group's best (highest-speedup) fixed kernel before its notes.
//
// Invariants: the result depends only on the corpus bytes, the query and the options; no
// candidate, or no score above min_similarity, renders nothing (an empty string).
#pragma once

#include "adapt/repair_notes.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::adapt {

// What the retrieved block shows: the notes, or the best fixed kernel and the notes.
enum class NotesMode : std::uint8_t { notes = 1, notes_and_kernel = 2 };

struct RetrievalOptions {
  int top_k = 3;
  int max_notes = 8;
  double min_similarity = 0;
  NotesMode mode = NotesMode::notes;
  std::vector<std::string> definition_prefixes; // empty: the current problem only
};

// `source` without // and /* */ comments (literals kept; a comment becomes one space).
std::string strip_comments(std::string_view source);
// The tokens of comment-stripped `source`, in order.
std::vector<std::string> code_tokens(std::string_view source);

// Okapi BM25 (k1 1.5, b 0.75) of `query` against each document, as above.
std::vector<double> bm25_scores(const std::vector<std::vector<std::string>>& documents,
                                const std::vector<std::string>& query);

struct RetrievedGroup {
  double score = 0;
  std::string problem;
  std::vector<const NotesRecord*> records; // best speedup first
};

class NotesIndex {
public:
  // The done records of a notes.jsonl file (failed ones are skipped). not_found for a missing
  // file, invalid_input for a bad line.
  static util::Expected<NotesIndex> load(const std::filesystem::path& path);
  explicit NotesIndex(std::vector<NotesRecord> records);

  std::vector<RetrievedGroup> retrieve(std::string_view problem, std::string_view kernel,
                                       const RetrievalOptions& options) const;
  // The Markdown block for `kernel` of `problem`; empty when nothing is retrieved.
  std::string render(std::string_view problem, std::string_view kernel,
                     const RetrievalOptions& options) const;
  std::size_t size() const { return m_records.size(); }
  // The problems the corpus holds notes for.
  std::set<std::string> problems() const;

private:
  struct Group {
    std::string problem;
    std::vector<std::string> tokens;
    std::vector<std::size_t> records;
  };
  std::vector<NotesRecord> m_records;
  std::vector<Group> m_groups; // corpus order of first appearance
};

std::string render_retrieved(const std::vector<RetrievedGroup>& groups,
                             const RetrievalOptions& options);

} // namespace ptxbench::adapt
