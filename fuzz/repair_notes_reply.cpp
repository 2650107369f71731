// Reviewer replies of the notes stage (untrusted text from a remote model): the JSON found in
// it and the checks on the notes. Invariants beyond "no crash": accepted notes hold 3 to 8
// notes with an instruction each and no "..." in an example, and serialise to JSON that is
// accepted again as the same notes; a refusal says why: where the reply holds a JSON object,
// by the JSON path of what is wrong (a message starting with "$").
#include "adapt/repair_notes.hpp"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ptxbench::adapt;
  const std::string_view reply(reinterpret_cast<const char*>(data), size);
  auto notes = parse_repair_notes(reply);
  if (!notes) {
    const std::string& why = notes.error().message;
    if (!why.starts_with("$") && !why.starts_with("the reply"))
      std::abort();
    return 0;
  }
  const std::size_t count = notes->instruction_notes.size();
  if (count < kMinNotes || count > kMaxNotes)
    std::abort();
  for (const InstructionNote& note : notes->instruction_notes)
    if (note.instruction.empty() || note.correct_example.find("...") != std::string::npos ||
        note.wrong_example.find("...") != std::string::npos)
      std::abort();
  const Json json = to_json(*notes);
  auto again = parse_repair_notes(json.dump());
  if (!again || to_json(*again) != json)
    std::abort();
  return 0;
}
