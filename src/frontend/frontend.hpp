// The candidate language seen from the agent: everything that differs between CUDA and Triton
// (and would differ for a third language) when a reply becomes a candidate and a problem becomes
// a prompt.
//
// Problem. The agent composes prompts and reads replies the same way for every language, but
// the instructions, the signature form, the code fence, the repair prompt and the knowledge-pack
// fallback are each language's own. Spread over the agent as branches on compile::Language, a
// new language would touch every one of them.
//
// Approach. One interface per language, one implementation per folder (cuda/, triton/), one
// table that maps a compile::Language to its frontend. The agent asks the frontend and never
// branches on the language; a caller may hand the loop any Frontend (a test's toy language).
//
// Invariants. A Frontend is stateless and thread-safe; the table's frontends live for the
// process. The persisted identity of a language stays compile::Language (plans, stores, traces).
#pragma once

#include "compile/extract.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <string>
#include <string_view>

namespace ptxbench::frontend {

class Frontend {
public:
  virtual ~Frontend() = default;

  // The language's name, as knowledge/packs.json keys its variants ("cuda", "triton").
  virtual std::string_view name() const = 0;

  // The candidate in a model reply; Error{extraction} worded for the model when there is none.
  virtual util::Expected<compile::Extraction> extract(std::string_view reply) const = 0;
  // What the model is asked to send when no candidate could be taken from its reply.
  virtual std::string reply_request() const = 0;

  // The system prompt: the language's instructions, the knowledge pack (`pack_text`, may be
  // empty), the problem's signature in the language's form and the target architecture.
  // invalid_input when the problem's definition has no signature in this language.
  virtual util::Expected<std::string> system_prompt(const suite::Problem& problem,
                                                    std::string_view pack_text,
                                                    compile::Arch arch) const = 0;
  // The first user message of a repair trajectory: `task` (the agent's task content), the wrong
  // kernel in the language's fence and the error the evaluator gave it.
  virtual util::Expected<std::string> repair_prompt(std::string_view task,
                                                    const suite::Problem& problem,
                                                    std::string_view wrong_kernel,
                                                    std::string_view error_log) const = 0;
  // The knowledge-pack variant when the manifest names none for the problem's kind.
  virtual std::string_view base_variant() const = 0;
};

// The frontend of a built-in language.
const Frontend& of(compile::Language language);

// `text` without its final line breaks: the prompts place each part on its own lines.
std::string_view without_final_newlines(std::string_view text);

} // namespace ptxbench::frontend
