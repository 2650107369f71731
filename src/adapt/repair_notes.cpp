#include "adapt/repair_notes.hpp"

#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <array>
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

using util::Emptiness;
using util::JsonReader;
using util::key_path;

util::Error invalid_reply(std::string message) {
  return util::make_error(util::ErrorKind::bad_response, std::move(message));
}

std::string note_text(JsonReader& in, const Json& json, const std::string& path,
                      std::string_view key) {
  return in.string(json, path, key, Emptiness::allowed);
}

std::vector<std::string> note_texts(JsonReader& in, const Json& json, const std::string& path,
                                    std::string_view key) {
  return in.strings(json, path, key, Emptiness::allowed);
}

void check_note(JsonReader& in, const InstructionNote& n, const std::string& path) {
  if (util::trim(n.instruction).empty())
    in.fail(key_path(path, "instruction"), "is empty");
  if (n.correct_example.find("...") != std::string::npos)
    in.fail(key_path(path, "correct_example"), "abbreviates code with \"...\"");
  if (n.wrong_example.find("...") != std::string::npos)
    in.fail(key_path(path, "wrong_example"), "abbreviates code with \"...\"");
}

InstructionNote read_note(JsonReader& in, const Json& json, const std::string& path) {
  InstructionNote n;
  if (!in.expect_object(json, path))
    return n;
  n.instruction = note_text(in, json, path, "instruction");
  n.shape_context = note_text(in, json, path, "shape_context");
  n.correct_example = note_text(in, json, path, "correct_example");
  n.wrong_example = note_text(in, json, path, "wrong_example");
  n.operand_contract = note_texts(in, json, path, "operand_contract");
  n.required_sequence = note_texts(in, json, path, "required_sequence");
  n.diagnostics = note_texts(in, json, path, "diagnostics");
  n.do_not_do = note_texts(in, json, path, "do_not_do");
  n.example_completeness = note_text(in, json, path, "example_completeness");
  n.missing_details = note_texts(in, json, path, "missing_details");
  if (in.ok())
    check_note(in, n, path);
  return n;
}

// The notes at `path`: a summary, 3 to 8 checked notes and tags.
void read_notes(JsonReader& in, const Json& json, const std::string& path, RepairNotes& notes) {
  if (!in.expect_object(json, path))
    return;
  notes.summary = note_text(in, json, path, "summary");
  notes.tags = note_texts(in, json, path, "tags");
  const Json* list = in.array_member(json, path, "instruction_notes");
  if (!list)
    return;
  const std::string list_path = key_path(path, "instruction_notes");
  if (list->size() < kMinNotes || list->size() > kMaxNotes)
    in.fail(list_path,
            fmt::format("has {} notes; {} to {} are required", list->size(), kMinNotes, kMaxNotes));
  for (std::size_t i = 0; in.ok() && i < list->size(); ++i)
    notes.instruction_notes.push_back(read_note(in, (*list)[i], util::index_path(list_path, i)));
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

NotesCall read_notes_call(JsonReader& in, const Json& json, const std::string& path) {
  NotesCall c;
  if (!in.expect_object(json, path))
    return c;
  c.pass = in.optional_integer(json, path, "pass", 0).value_or(0);
  c.attempts = in.optional_integer(json, path, "attempts", 0).value_or(0);
  c.input_tokens = in.optional_integer(json, path, "input_tokens", 0).value_or(0);
  c.output_tokens = in.optional_integer(json, path, "output_tokens", 0).value_or(0);
  c.error = in.optional_string(json, path, "error", Emptiness::allowed).value_or("");
  return c;
}

std::vector<NotesCall> read_calls(JsonReader& in, const Json& json) {
  std::vector<NotesCall> calls;
  const Json* list = in.optional_array(json, "$", "calls");
  for (std::size_t i = 0; list && in.ok() && i < list->size(); ++i)
    calls.push_back(read_notes_call(in, (*list)[i], util::index_path("$.calls", i)));
  return calls;
}

constexpr std::array<std::string_view, 2> kStatuses{"done", "failed"};

// The notes of a done record; a failed one has none (null).
void read_record_notes(JsonReader& in, const Json& json, NotesRecord& r) {
  const Json* notes = JsonReader::optional(json, "notes");
  if (r.status == "done" && in.required(json, "$", "notes"))
    read_notes(in, *notes, "$.notes", r.notes);
  else if (r.status != "done" && notes && !notes->is_null())
    in.fail("$.notes", "expected null for a failed record, got " + std::string(notes->type_name()));
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
  PTXBENCH_TRY_ASSIGN(auto json, reply_json(reply));
  JsonReader in("", util::ErrorKind::bad_response);
  RepairNotes notes;
  read_notes(in, json, "$", notes);
  return in.finish(std::move(notes));
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
  Json out{{"id", r.id},
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
  if (r.source)
    out["source"] = Json{{"run_dir", r.source->run_dir},
                         {"trajectory_key", to_json(r.source->trajectory_key)},
                         {"turn", r.source->turn},
                         {"repair_run_dir", r.source->repair_run_dir}};
  return out;
}

namespace {

void read_source(JsonReader& in, const Json& json, NotesRecord& r) {
  const Json* source = in.optional_object(json, "$", "source");
  if (source == nullptr)
    return;
  NotesSource out;
  out.run_dir = note_text(in, *source, "$.source", "run_dir");
  if (const Json* key = in.required(*source, "$.source", "trajectory_key")) {
    auto parsed = trajectory_key_from_json(*key);
    if (parsed)
      out.trajectory_key = std::move(*parsed);
    else
      in.fail("$.source.trajectory_key", parsed.error().message);
  }
  out.turn = in.integer(*source, "$.source", "turn");
  out.repair_run_dir = note_text(in, *source, "$.source", "repair_run_dir");
  r.source = std::move(out);
}

} // namespace

util::Expected<NotesRecord> notes_record_from_json(const Json& json) {
  JsonReader in("");
  NotesRecord r;
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(r));
  r.id = note_text(in, json, "$", "id");
  if (const Json* status = in.required(json, "$", "status"))
    if (auto index = in.choice_at(*status, "$.status", kStatuses))
      r.status = std::string(kStatuses[*index]);
  r.problem = note_text(in, json, "$", "problem");
  r.wrong_kernel = note_text(in, json, "$", "wrong_kernel");
  r.feedback = note_text(in, json, "$", "feedback");
  r.fixed_kernel = note_text(in, json, "$", "fixed_kernel");
  r.speedup = in.nullable_number(json, "$", "speedup");
  r.notes_model = note_text(in, json, "$", "notes_model");
  r.prompt_version = note_text(in, json, "$", "prompt_version");
  read_record_notes(in, json, r);
  r.calls = read_calls(in, json);
  r.input_tokens = in.optional_integer(json, "$", "input_tokens", 0).value_or(0);
  r.output_tokens = in.optional_integer(json, "$", "output_tokens", 0).value_or(0);
  r.cost_usd = in.nullable_number(json, "$", "cost_usd");
  r.error = note_text(in, json, "$", "error");
  read_source(in, json, r);
  return in.finish(std::move(r));
}

} // namespace ptxbench::adapt
