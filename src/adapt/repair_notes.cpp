#include "adapt/repair_notes.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

constexpr std::string_view kNotesSystem =
    "You are a senior CUDA kernel reviewer collecting exact instruction-usage notes. You are "
    "shown a kernel that failed, the feedback it got, and a fixed kernel for the same problem. "
    "Write down what a kernel author must know to use the instructions involved correctly, so "
    "that someone writing a different kernel with the same instructions avoids the mistake.";

constexpr std::string_view kFormat = R"(Answer with one JSON object and nothing else:
{"summary": "<one paragraph: what was wrong and what fixed it>",
 "instruction_notes": [
   {"instruction": "<PTX instruction, intrinsic or API>",
    "shape_context": "<tile shapes, layouts, dtypes, thread roles it applies to>",
    "correct_example": "<complete code as in the fixed kernel>",
    "wrong_example": "<complete code as in the wrong kernel>",
    "operand_contract": ["<requirement on an operand>"],
    "required_sequence": ["<step that must come before or after>"],
    "diagnostics": ["<symptom that reveals this mistake>"],
    "do_not_do": ["<a thing to avoid>"],
    "example_completeness": "<complete | partial: why>",
    "missing_details": ["<what the examples leave out>"]}],
 "tags": ["<short tag>"]}
Rules: 3 to 8 notes; notes are about instructions, not about this operator; examples are real
code copied or adapted from the kernels, never abbreviated with "...".)";

util::Error invalid_reply(std::string message) {
  return util::make_error(util::ErrorKind::bad_response, std::move(message));
}

// Reads a note object's fields; the first problem wins.
class NoteReader {
public:
  explicit NoteReader(std::string where) : m_where(std::move(where)) {}

  std::string text(const Json& json, const char* key) {
    const Json* value = find(json, key);
    if (value == nullptr)
      return {};
    if (value->is_string())
      return value->get<std::string>();
    fail(key, "must be a string");
    return {};
  }
  std::vector<std::string> texts(const Json& json, const char* key) {
    const Json* value = find(json, key);
    std::vector<std::string> out;
    if (value == nullptr)
      return out;
    const bool strings = value->is_array() && std::ranges::all_of(*value, [](const Json& item) {
                           return item.is_string();
                         });
    if (!strings) {
      fail(key, "must be a list of strings");
      return out;
    }
    for (const Json& item : *value)
      out.push_back(item.get<std::string>());
    return out;
  }
  void fail(std::string_view key, std::string_view what) {
    if (m_problem.empty())
      m_problem = fmt::format("{}\"{}\" {}", m_where, key, what);
  }
  const std::string& problem() const { return m_problem; }

private:
  const Json* find(const Json& json, const char* key) {
    auto it = json.find(key);
    if (it != json.end())
      return &*it;
    fail(key, "is missing");
    return nullptr;
  }

  std::string m_where;
  std::string m_problem;
};

InstructionNote read_note(NoteReader& in, const Json& json) {
  InstructionNote n;
  n.instruction = in.text(json, "instruction");
  n.shape_context = in.text(json, "shape_context");
  n.correct_example = in.text(json, "correct_example");
  n.wrong_example = in.text(json, "wrong_example");
  n.operand_contract = in.texts(json, "operand_contract");
  n.required_sequence = in.texts(json, "required_sequence");
  n.diagnostics = in.texts(json, "diagnostics");
  n.do_not_do = in.texts(json, "do_not_do");
  n.example_completeness = in.text(json, "example_completeness");
  n.missing_details = in.texts(json, "missing_details");
  if (util::trim(n.instruction).empty())
    in.fail("instruction", "is empty");
  if (n.correct_example.find("...") != std::string::npos)
    in.fail("correct_example", "abbreviates code with \"...\"");
  if (n.wrong_example.find("...") != std::string::npos)
    in.fail("wrong_example", "abbreviates code with \"...\"");
  return n;
}

util::Expected<RepairNotes> notes_from_json(const Json& json) {
  if (!json.is_object())
    return invalid_reply("the notes are not a JSON object");
  NoteReader top("");
  RepairNotes notes;
  notes.summary = top.text(json, "summary");
  notes.tags = top.texts(json, "tags");
  auto list = json.find("instruction_notes");
  if (list == json.end() || !list->is_array())
    top.fail("instruction_notes", "must be a list of notes");
  else if (list->size() < kMinNotes || list->size() > kMaxNotes)
    top.fail("instruction_notes", fmt::format("has {} notes; {} to {} are required", list->size(),
                                              kMinNotes, kMaxNotes));
  if (!top.problem().empty())
    return invalid_reply(top.problem());
  for (std::size_t i = 0; i < list->size(); ++i) {
    NoteReader in(fmt::format("note {}: ", i + 1));
    if (!(*list)[i].is_object())
      return invalid_reply(fmt::format("note {} is not a JSON object", i + 1));
    notes.instruction_notes.push_back(read_note(in, (*list)[i]));
    if (!in.problem().empty())
      return invalid_reply(in.problem());
  }
  return notes;
}

// The first ```json block of a reply, or empty.
std::string_view fenced_part(std::string_view reply) {
  const auto fence = reply.find("```json");
  const auto start = fence == std::string_view::npos ? fence : reply.find('\n', fence);
  const auto end = start == std::string_view::npos ? start : reply.find("```", start);
  return end == std::string_view::npos ? std::string_view()
                                       : reply.substr(start + 1, end - start - 1);
}

// From the first '{' to the last '}', or empty.
std::string_view braced(std::string_view reply) {
  const auto open = reply.find('{');
  const auto close = reply.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return {};
  return reply.substr(open, close - open + 1);
}

// The reply's JSON: the whole reply, else its ```json block, else its outermost braces.
util::Expected<Json> reply_json(std::string_view reply) {
  bool any = false;
  for (const std::string_view text : {util::trim(reply), fenced_part(reply), braced(reply)}) {
    if (text.empty() || text.front() != '{')
      continue;
    any = true;
    Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!json.is_discarded())
      return json;
  }
  return invalid_reply(any ? "the reply's JSON does not parse" : "the reply holds no JSON object");
}

Json to_json(const InstructionNote& n) {
  return Json{{"instruction", n.instruction},
              {"shape_context", n.shape_context},
              {"correct_example", n.correct_example},
              {"wrong_example", n.wrong_example},
              {"operand_contract", n.operand_contract},
              {"required_sequence", n.required_sequence},
              {"diagnostics", n.diagnostics},
              {"do_not_do", n.do_not_do},
              {"example_completeness", n.example_completeness},
              {"missing_details", n.missing_details}};
}

Json to_json(const NotesCall& c) {
  return Json{{"pass", c.pass},
              {"attempts", c.attempts},
              {"input_tokens", c.input_tokens},
              {"output_tokens", c.output_tokens},
              {"error", c.error}};
}

template <typename T> void read_integer(const Json& json, const char* key, T& out) {
  if (auto it = json.find(key); it != json.end() && it->is_number_integer())
    out = it->get<T>();
}

util::Expected<std::vector<NotesCall>> calls_from_json(const Json& json) {
  std::vector<NotesCall> out;
  if (!json.is_array())
    return util::make_error(util::ErrorKind::invalid_input, "field \"calls\" must be a list");
  for (const Json& item : json) {
    if (!item.is_object())
      return util::make_error(util::ErrorKind::invalid_input, "a call is not a JSON object");
    NotesCall c;
    read_integer(item, "pass", c.pass);
    read_integer(item, "attempts", c.attempts);
    read_integer(item, "input_tokens", c.input_tokens);
    read_integer(item, "output_tokens", c.output_tokens);
    if (auto error = item.find("error"); error != item.end() && error->is_string())
      c.error = error->get<std::string>();
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace

NotesPrompt notes_prompt(const PairRecord& pair) {
  NotesPrompt prompt;
  prompt.system = std::string(kNotesSystem);
  prompt.user =
      fmt::format("## Problem\n\n{}\n\n## Error kernel\n\n```cuda\n{}\n```\n\n"
                  "## Error feedback\n\n{}\n\n## Fixed kernel\n\n```cuda\n{}\n```\n\n{}\n",
                  pair.failure.trajectory_key.problem, util::trim(pair.failure.kernel_source),
                  util::trim(pair.failure.feedback), util::trim(pair.repaired_kernel), kFormat);
  return prompt;
}

util::Expected<RepairNotes> parse_repair_notes(std::string_view reply) {
  auto json = reply_json(reply);
  PTXBENCH_TRY(json);
  return notes_from_json(*json);
}

Json to_json(const RepairNotes& notes) {
  Json list = Json::array();
  for (const InstructionNote& n : notes.instruction_notes)
    list.push_back(to_json(n));
  return Json{{"summary", notes.summary}, {"instruction_notes", list}, {"tags", notes.tags}};
}

Json to_json(const NotesRecord& r) {
  Json calls = Json::array();
  for (const NotesCall& c : r.calls)
    calls.push_back(to_json(c));
  return Json{{"id", r.id},
              {"status", r.status},
              {"problem", r.problem},
              {"wrong_kernel", r.wrong_kernel},
              {"feedback", r.feedback},
              {"fixed_kernel", r.fixed_kernel},
              {"speedup", r.speedup ? Json(*r.speedup) : Json()},
              {"notes_model", r.notes_model},
              {"prompt_version", r.prompt_version},
              {"notes", r.status == "done" ? to_json(r.notes) : Json()},
              {"calls", calls},
              {"input_tokens", r.input_tokens},
              {"output_tokens", r.output_tokens},
              {"cost_usd", r.cost_usd ? Json(*r.cost_usd) : Json()},
              {"error", r.error}};
}

util::Expected<NotesRecord> notes_record_from_json(const Json& json) {
  if (!json.is_object())
    return util::make_error(util::ErrorKind::invalid_input, "expected a JSON object");
  NoteReader in("field ");
  NotesRecord r;
  r.id = in.text(json, "id");
  r.status = in.text(json, "status");
  r.problem = in.text(json, "problem");
  r.wrong_kernel = in.text(json, "wrong_kernel");
  r.feedback = in.text(json, "feedback");
  r.fixed_kernel = in.text(json, "fixed_kernel");
  r.notes_model = in.text(json, "notes_model");
  r.prompt_version = in.text(json, "prompt_version");
  r.error = in.text(json, "error");
  if (!in.problem().empty())
    return util::make_error(util::ErrorKind::invalid_input, in.problem());
  if (r.status != "done" && r.status != "failed")
    return util::make_error(util::ErrorKind::invalid_input,
                            "field \"status\" must be \"done\" or \"failed\"");
  if (auto s = json.find("speedup"); s != json.end() && s->is_number())
    r.speedup = s->get<double>();
  if (auto c = json.find("cost_usd"); c != json.end() && c->is_number())
    r.cost_usd = c->get<double>();
  read_integer(json, "input_tokens", r.input_tokens);
  read_integer(json, "output_tokens", r.output_tokens);
  auto calls = calls_from_json(json.value("calls", Json::array()));
  PTXBENCH_TRY(calls);
  r.calls = std::move(*calls);
  if (r.status == "done") {
    auto notes = notes_from_json(json.value("notes", Json()));
    if (!notes)
      return util::make_error(util::ErrorKind::invalid_input, "notes: " + notes.error().message);
    r.notes = std::move(*notes);
  }
  return r;
}

} // namespace ptxbench::adapt
