// The notes stage's record (DIR/fixit/notes/notes.jsonl): it reads back what it wrote, and a
// mistyped member — optional ones included — is an error naming its JSON path, never dropped.
#include "adapt/repair_notes.hpp"

#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

NotesRecord failed_notes_record() {
  NotesRecord r;
  r.id = "pair-1";
  r.status = "failed";
  r.problem = "gemm";
  r.wrong_kernel = "// wrong";
  r.feedback = "numbers differ";
  r.fixed_kernel = "// fixed";
  r.speedup = 1.5;
  r.notes_model = "reviewer";
  r.prompt_version = std::string(kNotesPromptVersion);
  r.calls = {{1, 2, 100, 40, "no JSON object"}};
  r.input_tokens = 100;
  r.output_tokens = 40;
  r.cost_usd = 0.01;
  r.error = "pass 1: no JSON object";
  return r;
}

std::string notes_record_error(const Json& json) {
  auto record = notes_record_from_json(json);
  if (record)
    return "accepted";
  EXPECT_EQ(record.error().kind, util::ErrorKind::invalid_input);
  return record.error().message;
}

TEST(NotesRecord, AFailedRecordRoundTripsThroughJson) {
  const Json json = to_json(failed_notes_record());
  auto back = notes_record_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), json);
}

TEST(NotesRecord, AStringSpeedupIsRejectedNamingItsJsonPath) {
  Json json = to_json(failed_notes_record());
  json["speedup"] = "1.5";
  EXPECT_EQ(notes_record_error(json), "$.speedup: expected a number or null, got string");
}

TEST(NotesRecord, AStringCostIsRejectedNamingItsJsonPath) {
  Json json = to_json(failed_notes_record());
  json["cost_usd"] = "0.01";
  EXPECT_EQ(notes_record_error(json), "$.cost_usd: expected a number or null, got string");
}

TEST(NotesRecord, AStringTokenCountIsRejectedNamingItsJsonPath) {
  Json json = to_json(failed_notes_record());
  json["input_tokens"] = "100";
  EXPECT_EQ(notes_record_error(json), "$.input_tokens: expected an integer >= 0, got string");
}

TEST(NotesRecord, AMistypedCallIsRejectedNamingItsJsonPath) {
  Json json = to_json(failed_notes_record());
  json["calls"][0]["attempts"] = "2";
  EXPECT_EQ(notes_record_error(json), "$.calls[0].attempts: expected an integer >= 0, got string");
  json = to_json(failed_notes_record());
  json["calls"][0]["error"] = 5;
  EXPECT_EQ(notes_record_error(json), "$.calls[0].error: expected a string, got integer");
  json["calls"] = Json::object();
  EXPECT_EQ(notes_record_error(json), "$.calls: expected an array, got object");
}

TEST(NotesRecord, AnUnknownStatusNamesTheStatusesThereAre) {
  Json json = to_json(failed_notes_record());
  json["status"] = "pending";
  EXPECT_EQ(notes_record_error(json),
            "$.status: expected one of \"done\", \"failed\", got \"pending\"");
}

TEST(NotesRecord, ADoneRecordWithoutNotesOrAFailedOneWithNotesIsRejected) {
  Json json = to_json(failed_notes_record());
  json["status"] = "done";
  EXPECT_EQ(notes_record_error(json), "$.notes: expected an object, got null");
  json = to_json(failed_notes_record());
  json["notes"] = Json::object();
  EXPECT_EQ(notes_record_error(json), "$.notes: expected null for a failed record, got object");
}

TEST(NotesRecord, ADoneRecordsNotesAreCheckedAsAReviewersReplyIs) {
  Json json = to_json(failed_notes_record());
  json["status"] = "done";
  json["notes"] = {{"summary", "s"}, {"instruction_notes", Json::array()}, {"tags", {"x"}}};
  EXPECT_EQ(notes_record_error(json),
            "$.notes.instruction_notes: has 0 notes; 3 to 8 are required");
}

} // namespace
} // namespace ptxbench::adapt
