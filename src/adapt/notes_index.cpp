#include "adapt/notes_index.hpp"

#include "adapt/jsonl.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/core.h>
#include <numeric>
#include <set>
#include <unordered_map>

namespace ptxbench::adapt {
namespace {

constexpr double kK1 = 1.5;
constexpr double kB = 0.75;

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// The end of the literal opened by the quote at `i` (one past its closing quote, or the end).
std::size_t literal_end(std::string_view s, std::size_t i) {
  const char quote = s[i];
  for (std::size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\')
      ++j;
    else if (s[j] == quote || s[j] == '\n')
      return j + 1;
  }
  return s.size();
}

// The end of the comment starting at `i`, or npos when none starts there.
std::size_t comment_end(std::string_view s, std::size_t i) {
  if (i + 1 >= s.size() || s[i] != '/')
    return std::string_view::npos;
  if (s[i + 1] == '/') {
    const auto newline = s.find('\n', i);
    return newline == std::string_view::npos ? s.size() : newline;
  }
  if (s[i + 1] == '*') {
    const auto close = s.find("*/", i + 2);
    return close == std::string_view::npos ? s.size() : close + 2;
  }
  return std::string_view::npos;
}

std::string joined_items(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "" : "; ") + std::string(util::trim(item));
  return out;
}

void render_note(std::string& out, int number, const InstructionNote& n) {
  out += fmt::format("{}. **{}**\n", number, util::trim(n.instruction));
  const std::pair<const char*, std::string> lines[] = {
      {"Shape/context", std::string(util::trim(n.shape_context))},
      {"Operand contract", joined_items(n.operand_contract)},
      {"Required sequence", joined_items(n.required_sequence)},
      {"Diagnostics", joined_items(n.diagnostics)},
      {"Do not do", joined_items(n.do_not_do)}};
  for (const auto& [label, text] : lines)
    if (!text.empty())
      out += fmt::format("   - {}: {}\n", label, text);
  if (!util::trim(n.correct_example).empty())
    out += fmt::format("   - Correct example:\n```cuda\n{}\n```\n", util::trim(n.correct_example));
  if (!util::trim(n.wrong_example).empty())
    out += fmt::format("   - Wrong example:\n```cuda\n{}\n```\n", util::trim(n.wrong_example));
}

bool prefix_match(std::string_view problem, const RetrievalOptions& options,
                  std::string_view current) {
  if (options.definition_prefixes.empty())
    return problem == current;
  return std::ranges::any_of(options.definition_prefixes,
                             [&](const std::string& p) { return problem.starts_with(p); });
}

} // namespace

std::string strip_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] == '"' || s[i] == '\'') {
      const std::size_t end = literal_end(s, i);
      out.append(s.substr(i, end - i));
      i = end;
    } else if (const std::size_t end = comment_end(s, i); end != std::string_view::npos) {
      out += ' ';
      i = end;
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::vector<std::string> code_tokens(std::string_view source) {
  const std::string code = strip_comments(source);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < code.size();) {
    std::size_t j = i;
    if (ident_start(code[i]))
      while (j < code.size() && ident_char(code[j]))
        ++j;
    else if (digit(code[i]))
      while (j < code.size() && digit(code[j]))
        ++j;
    if (j == i) {
      ++i;
      continue;
    }
    tokens.emplace_back(code.substr(i, j - i));
    i = j;
  }
  return tokens;
}

std::vector<double> bm25_scores(const std::vector<std::vector<std::string>>& documents,
                                const std::vector<std::string>& query) {
  const double n_docs = static_cast<double>(documents.size());
  std::vector<std::unordered_map<std::string, double>> counts(documents.size());
  std::unordered_map<std::string, double> containing;
  double total_length = 0;
  for (std::size_t d = 0; d < documents.size(); ++d) {
    for (const std::string& token : documents[d])
      counts[d][token] += 1;
    for (const auto& [token, count] : counts[d])
      containing[token] += 1;
    total_length += static_cast<double>(documents[d].size());
  }
  const double avgdl = documents.empty() ? 0 : total_length / n_docs;
  const std::set<std::string> terms(query.begin(), query.end());
  std::vector<double> scores(documents.size(), 0.0);
  for (std::size_t d = 0; d < documents.size(); ++d) {
    const double length = static_cast<double>(documents[d].size());
    const double norm = kK1 * (1 - kB + (avgdl > 0 ? kB * length / avgdl : 0));
    for (const std::string& term : terms) {
      auto f = counts[d].find(term);
      if (f == counts[d].end())
        continue;
      const double n = containing[term];
      const double idf = std::log(1 + (n_docs - n + 0.5) / (n + 0.5));
      scores[d] += idf * f->second * (kK1 + 1) / (f->second + norm);
    }
  }
  return scores;
}

util::Expected<NotesIndex> NotesIndex::load(const std::filesystem::path& path) {
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<NotesRecord>(path, notes_record_from_json));
  std::erase_if(records, [](const NotesRecord& r) { return r.status != "done"; });
  return NotesIndex(std::move(records));
}

NotesIndex::NotesIndex(std::vector<NotesRecord> records) : m_records(std::move(records)) {
  std::map<std::pair<std::string, std::string>, std::size_t> group_of;
  for (std::size_t i = 0; i < m_records.size(); ++i) {
    const NotesRecord& r = m_records[i];
    auto [it, fresh] = group_of.try_emplace({r.problem, r.wrong_kernel}, m_groups.size());
    if (fresh)
      m_groups.push_back(Group{r.problem, code_tokens(r.wrong_kernel), {}});
    m_groups[it->second].records.push_back(i);
  }
}

std::vector<RetrievedGroup> NotesIndex::retrieve(std::string_view problem, std::string_view kernel,
                                                 const RetrievalOptions& options) const {
  std::vector<const Group*> candidates;
  for (const Group& group : m_groups)
    if (prefix_match(group.problem, options, problem))
      candidates.push_back(&group);
  std::vector<std::vector<std::string>> documents;
  for (const Group* group : candidates)
    documents.push_back(group->tokens);
  const std::vector<double> scores = bm25_scores(documents, code_tokens(kernel));
  std::vector<std::size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order,
                           [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<RetrievedGroup> out;
  for (std::size_t i : order) {
    if (static_cast<int>(out.size()) >= options.top_k || scores[i] <= options.min_similarity)
      break;
    RetrievedGroup group{scores[i], candidates[i]->problem, {}};
    for (std::size_t r : candidates[i]->records)
      group.records.push_back(&m_records[r]);
    std::ranges::stable_sort(group.records, [](const NotesRecord* a, const NotesRecord* b) {
      return a->speedup.value_or(-1) > b->speedup.value_or(-1);
    });
    out.push_back(std::move(group));
  }
  return out;
}

std::set<std::string> NotesIndex::problems() const {
  std::set<std::string> out;
  for (const Group& group : m_groups)
    out.insert(group.problem);
  return out;
}

std::string NotesIndex::render(std::string_view problem, std::string_view kernel,
                               const RetrievalOptions& options) const {
  return render_retrieved(retrieve(problem, kernel, options), options);
}

std::string render_retrieved(const std::vector<RetrievedGroup>& groups,
                             const RetrievalOptions& options) {
  if (groups.empty())
    return {};
  const bool with_kernel = options.mode == NotesMode::notes_and_kernel;
  std::string out = with_kernel ? "## Retrieved best fixed kernels and notes from fixing similar "
                                  "historical wrong kernels\n"
                                : "## Retrieved repair notes from fixing similar historical "
                                  "wrong kernels\n";
  int notes_left = options.max_notes;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const RetrievedGroup& g = groups[k];
    out += fmt::format("\n### Similar wrong kernel {}: bm25={:.3f}, definition={}, "
                       "fixed_variants={}\n",
                       k + 1, g.score, g.problem, g.records.size());
    if (with_kernel) {
      const NotesRecord& best = *g.records.front();
      out += best.speedup ? fmt::format("\nBest fixed kernel (speedup {:.3f}x):\n", *best.speedup)
                          : std::string("\nBest fixed kernel:\n");
      out += fmt::format("```cuda\n{}\n```\n", util::trim(best.fixed_kernel));
    }
    if (const auto summary = util::trim(g.records.front()->notes.summary); !summary.empty())
      out += fmt::format("\nSummary: {}\n", summary);
    out += '\n';
    int number = 0;
    for (const NotesRecord* record : g.records) {
      for (const InstructionNote& note : record->notes.instruction_notes) {
        if (notes_left <= 0)
          break;
        render_note(out, ++number, note);
        --notes_left;
      }
    }
  }
  return out;
}

} // namespace ptxbench::adapt
