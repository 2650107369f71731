// The candidate language: everything that differs between CUDA and Triton (and would differ
// for a third language) when a reply becomes a candidate, a problem becomes a prompt and a
// candidate is checked and evaluated.
//
// Problem. The agent composes prompts and reads replies, and the evaluator checks and runs
// candidates, the same way for every language, but the instructions, the signature form, the
// code fence, the repair prompt, the knowledge-pack fallback, the static check, the child that
// loads the candidate and where its machine code comes from are each language's own. Spread
// over the agent, the evaluator and the cli as branches on compile::Language, a new language
// would touch every one of them.
//
// Approach. One interface per language, one implementation per folder (cuda/, triton/), one
// table that maps a compile::Language to its frontend. The agent and the evaluator ask the
// frontend (or the Candidate its check made, candidate.hpp) and never branch on the language; a
// caller may hand the loop or the static executor any Frontend (a test's toy language).
//
// Invariants. A Frontend is stateless and thread-safe; the table's frontends live for the
// process. The persisted identity of a language stays compile::Language (plans, stores, traces).
#pragma once

#include "compile/extract.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "frontend/candidate.hpp"
#include "frontend/check_report.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

namespace ptxbench::frontend {

// What `ptxbench check` concluded: the candidate passed, failed (rejected, did not build, or
// holds none of the target instructions), or passed as far as a machine without a GPU can go.
enum class CommandVerdict : std::uint8_t { pass = 1, fail = 2, needs_gpu = 3 };

// `ptxbench check`'s output: what --json prints, what the text form prints, and the verdict.
struct CommandCheck {
  nlohmann::ordered_json json;
  std::string text;
  CommandVerdict verdict = CommandVerdict::pass;
};

// `ptxbench show`'s part for a language: the section title and text of the problem's signature,
// and the JSON fields that carry it.
struct ShownSignature {
  std::string title;
  std::string text;
  nlohmann::ordered_json fields;
};

// A language's plain facts: its table row's data.
struct LanguageFacts {
  // The language's name, as knowledge/packs.json keys its variants ("cuda", "triton").
  std::string_view name;
  // The knowledge-pack variant when the manifest names none for the problem's kind.
  std::string_view base_variant;
  // The language's name in a report's "language" field; empty for CUDA, whose reports predate it.
  std::string_view report_tag;
  // `eval`'s line for a candidate that passed the check where no GPU step ran.
  std::string_view checked_summary;
  // The turn feedback's last line when no GPU step runs after a passed check.
  std::string_view no_gpu_note;
  // A static-only run's notice: what every turn stops after.
  std::string_view static_run_notice;
  // Whether checking the same source again costs next to nothing (a compile-cache hit): an
  // executor then checks in its own thread before the evaluator checks again.
  bool check_is_cached = false;
  // Whether its candidates run in `ptxbench-candidate`, the evaluator's own child: a spare
  // started ahead may serve them and ncu replays their whole process (application replay).
  // Otherwise each starts a child of its own (Candidate::child_command).
  bool uses_candidate_binary = false;

  // The prompts' pieces, which Frontend's system_prompt, reply_request and repair_prompt lay out
  // the same way for every language:
  // the fence that opens a candidate block ("```cuda");
  std::string_view fence;
  // the language as the repair prompt names its kernel ("the CUDA kernel");
  std::string_view kernel_noun;
  // the system prompt's opening: what to write, its rules and what comes back;
  std::string_view instructions;
  // the title of the knowledge pack's section;
  std::string_view knowledge_title;
  // what the model is asked to send when no candidate could be taken from its reply.
  std::string_view reply_request;

  // The file name ending of its candidates (".cu"): the language of a file given without one.
  std::string_view file_extension;
};

class Frontend {
public:
  explicit Frontend(LanguageFacts facts) : m_facts(facts) {}
  virtual ~Frontend() = default;
  Frontend(const Frontend&) = delete;
  Frontend& operator=(const Frontend&) = delete;
  Frontend(Frontend&&) = delete;
  Frontend& operator=(Frontend&&) = delete;

  std::string_view name() const { return m_facts.name; }
  std::string_view base_variant() const { return m_facts.base_variant; }
  std::string_view report_tag() const { return m_facts.report_tag; }
  std::string_view checked_summary() const { return m_facts.checked_summary; }
  std::string_view no_gpu_note() const { return m_facts.no_gpu_note; }
  std::string_view static_run_notice() const { return m_facts.static_run_notice; }
  std::string_view file_extension() const { return m_facts.file_extension; }
  bool check_is_cached() const { return m_facts.check_is_cached; }
  bool uses_candidate_binary() const { return m_facts.uses_candidate_binary; }

  // The candidate in a model reply; Error{extraction} worded for the model when there is none.
  virtual util::Expected<compile::Extraction> extract(std::string_view reply) const = 0;
  // What the model is asked to send when no candidate could be taken from its reply.
  virtual std::string reply_request() const { return std::string(m_facts.reply_request); }

  // The system prompt: the language's instructions, the knowledge pack (`pack_text`, may be
  // empty) under its title, the problem's signature (prompt_signature) in the language's fence
  // and the target architecture with the language's build note. invalid_input when the
  // problem's definition has no signature in this language.
  virtual util::Expected<std::string> system_prompt(const suite::Problem& problem,
                                                    std::string_view pack_text,
                                                    compile::Arch arch) const;
  // The problem's signature as `ptxbench show` prints it; invalid_input as system_prompt's.
  virtual util::Expected<ShownSignature> shown_signature(const suite::Problem& problem) const = 0;
  // The first user message of a repair trajectory, the original Fixit user prompt word for
  // word (its typos are data) with the language's fence and kernel noun: "Task:\n{task}\n\n
  // Kernel\n\n```cuda\n{kernel}\n```\nError Message\n\n{log}\nYour task is to fix the CUDA
  // kernel with the minimal change. ..." (`task` is the agent's task content), then the
  // language's repair_rules.
  virtual util::Expected<std::string> repair_prompt(std::string_view task,
                                                    const suite::Problem& problem,
                                                    std::string_view wrong_kernel,
                                                    std::string_view error_log) const;

  // The static check of `source` for `problem` on `arch`: the report and, when it passed, the
  // candidate a GPU evaluation runs (its work folder holds the source, written once). Errors
  // only when no verdict exists (a tool missing, a definition without this language's
  // signature); a rejected or unbuildable candidate is a report.
  virtual util::Expected<Checked> check(const CheckTools& tools, const std::string& source,
                                        const suite::Problem& problem,
                                        compile::Arch arch) const = 0;
  // The report's language part: as text after its problem, arch and signature lines; in JSON,
  // the fields added to `out` after "build" (none by default).
  virtual std::string check_text(const CheckReport& report) const = 0;
  virtual void add_check_json(const CheckReport& /*report*/,
                              nlohmann::ordered_json& /*out*/) const {}
  // `ptxbench check`, which needs no GPU: the language's static report on each of `arches`. By
  // default check() on each, as a JSON array of the reports and their texts one after another;
  // it fails when a report is not ok or holds none of the target instructions. `file` is the
  // candidate's path as the user gave it, for the text.
  virtual util::Expected<CommandCheck>
  command_check(const CheckTools& tools, const std::string& source, const suite::Problem& problem,
                std::span<const compile::Arch> arches, std::string_view file) const;

protected:
  // The problem's signature as the prompts show it inside the fence; invalid_input when the
  // definition has none in this language.
  virtual util::Expected<std::string> prompt_signature(const suite::Problem& problem) const = 0;
  // How a candidate is built for `arch`, as the system prompt's last line says it in brackets.
  virtual std::string build_note(compile::Arch arch) const = 0;
  // What the repair prompt adds after the original's text: none by default.
  virtual util::Expected<std::string> repair_rules(const suite::Problem& /*problem*/) const {
    return std::string();
  }

private:
  LanguageFacts m_facts;
};

// The frontend of a built-in language.
const Frontend& of(compile::Language language);

// The language a command's `--language` names; with none, the one whose file extension `file`
// has (a .py file is Triton's), else CUDA. invalid_input naming the built-in languages for a
// name that is none of them.
util::Expected<compile::Language> language_for(std::string_view name, std::string_view file = {});

// `text` without its final line breaks: the prompts place each part on its own lines.
std::string_view without_final_newlines(std::string_view text);

} // namespace ptxbench::frontend
