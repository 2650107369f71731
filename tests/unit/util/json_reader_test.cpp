// The one JSON reader: errors name the origin and the JSON path, the first error wins, and the
// three kinds of member (required, optional, nullable) behave as json_reader.hpp says.
#include "util/json_reader.hpp"

#include <array>
#include <cmath>
#include <gtest/gtest.h>

namespace ptxbench::util {
namespace {

std::string first_error(const JsonReader& reader) {
  auto done = reader.finish(Ok{});
  return done ? std::string() : done.error().message;
}

TEST(JsonReader, PathsQuoteKeysThatAreNotIdentifiers) {
  EXPECT_EQ(key_path("$", "axes"), "$.axes");
  EXPECT_EQ(key_path("$.models", "gpt-5.4"), "$.models[\"gpt-5.4\"]");
  EXPECT_EQ(key_path("$", "0x"), "$[\"0x\"]");
  EXPECT_EQ(index_path(key_path("$", "workloads"), 3), "$.workloads[3]");
}

TEST(JsonReader, AWrongTypeNamesTheFileThePathAndWhatWasFound) {
  Json json = Json::parse(R"({"workloads":[{},{},{},{"axes":{"M":"big"}}]})");
  JsonReader reader("defs/gemm.json");
  const Json& axes = json["workloads"][3]["axes"];
  EXPECT_EQ(reader.integer_at(axes["M"], "$.workloads[3].axes.M"), 0);
  EXPECT_EQ(first_error(reader), "defs/gemm.json: $.workloads[3].axes.M: expected an integer, "
                                 "got string");
  EXPECT_EQ(reader.finish(Ok{}).error().kind, ErrorKind::invalid_input);
}

TEST(JsonReader, TheFirstErrorIsKept) {
  Json json = Json::parse(R"({"a":1})");
  JsonReader reader("x");
  reader.string(json, "$", "name", Emptiness::rejected);
  reader.string(json, "$", "a", Emptiness::rejected);
  EXPECT_EQ(first_error(reader), "x: $: missing required key \"name\"");
}

TEST(JsonReader, OptionalMembersAreAbsentWithoutAnErrorAndCheckedWhenPresent) {
  Json json = Json::parse(R"({"top_p":3,"top_k":0,"n":2.0,"on":true,"list":"one"})");
  JsonReader reader("m.json");
  EXPECT_FALSE(reader.optional_number(json, "$", "temperature", {0, 2}));
  EXPECT_FALSE(reader.optional_boolean(json, "$", "off"));
  EXPECT_EQ(reader.optional_integer(json, "$", "n", 1), 2);
  EXPECT_EQ(reader.optional_boolean(json, "$", "on"), true);
  EXPECT_EQ(reader.optional_strings(json, "$", "list"), std::vector<std::string>{"one"});
  EXPECT_TRUE(reader.ok());
  EXPECT_FALSE(reader.optional_number(json, "$", "top_p", {0, 1}));
  EXPECT_EQ(first_error(reader), "m.json: $.top_p: expected a number in [0, 1], got 3");
  JsonReader integers("m.json");
  EXPECT_FALSE(integers.optional_integer(json, "$", "top_k", 1));
  EXPECT_EQ(first_error(integers), "m.json: $.top_k: expected an integer >= 1, got 0");
}

TEST(JsonReader, NullableMembersReadNullAsAbsent) {
  Json json = Json::parse(R"({"description":null,"tags":null})");
  JsonReader reader("d.json");
  EXPECT_FALSE(reader.nullable_string(json, "$", "description"));
  EXPECT_TRUE(reader.string_list(json, "$", "tags", Emptiness::rejected).empty());
  EXPECT_TRUE(reader.ok());
  EXPECT_FALSE(reader.optional_string(json, "$", "description", Emptiness::allowed));
  EXPECT_EQ(first_error(reader), "d.json: $.description: expected a string, got null");
}

TEST(JsonReader, UnknownKeysAreErrorsExceptNotes) {
  constexpr std::array<std::string_view, 1> kKeys{"mode"};
  JsonReader reader("r.json");
  reader.allow_only(Json::parse(R"({"mode":"x","notes":"free text"})"), "$.r", kKeys);
  EXPECT_TRUE(reader.ok());
  reader.allow_only(Json::parse(R"({"mode":"x","efort":"high"})"), "$.r", kKeys);
  EXPECT_EQ(first_error(reader), "r.json: $.r.efort: unknown key");
}

TEST(JsonReader, AListOfStringsNamesTheElementThatIsWrong) {
  JsonReader reader("p.json");
  reader.optional_strings(Json::parse(R"({"models":["a",""]})"), "$", "models");
  EXPECT_EQ(first_error(reader), "p.json: $.models[1]: must not be empty");
  JsonReader empty("p.json");
  EXPECT_FALSE(empty.optional_strings(Json::parse(R"({"models":[]})"), "$", "models"));
  EXPECT_NE(first_error(empty).find("expected a non-empty list of non-empty strings"),
            std::string::npos);
}

TEST(JsonReader, NonFiniteNumbersAreReadInTheSpellingAsked) {
  JsonReader reader("t.json");
  EXPECT_TRUE(
      std::isinf(reader.number_or_nonfinite_at(Json("Infinity"), "$.e", NonFiniteSpelling::exact)));
  EXPECT_TRUE(
      std::isnan(reader.number_or_nonfinite_at(Json("nan"), "$.e", NonFiniteSpelling::any_case)));
  EXPECT_TRUE(reader.ok());
  reader.number_or_nonfinite_at(Json("nan"), "$.e", NonFiniteSpelling::exact);
  EXPECT_EQ(first_error(reader), "t.json: $.e: expected a number, NaN or Infinity, got \"nan\"");
}

TEST(JsonReader, AnEmptyOriginLeavesThePathFirst) {
  JsonReader reader("");
  reader.integer(Json::parse(R"({"cap":"33"})"), "$.balance", "cap");
  EXPECT_EQ(first_error(reader), "$.balance.cap: expected an integer, got string");
}

TEST(JsonReader, ThePeersReaderReportsBadResponse) {
  JsonReader reader("reply", ErrorKind::bad_response);
  reader.boolean(Json::parse(R"({"ok":"yes"})"), "$", "ok");
  auto done = reader.finish(Ok{});
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().kind, ErrorKind::bad_response);
  EXPECT_EQ(done.error().message, "reply: $.ok: expected a boolean, got string");
}

TEST(JsonReader, AnIntegerOutsideItsRangeNamesTheRange) {
  const Json json = Json::parse(R"({"set":4294967296,"stream":7,"calls":2.0})");
  JsonReader reader("r");
  EXPECT_EQ(reader.integer(json, "$", "stream", IntegerRange::of<std::uint32_t>()), 7);
  EXPECT_EQ(reader.integer(json, "$", "calls", IntegerRange::of<int>()), 2);
  EXPECT_TRUE(reader.ok());
  EXPECT_EQ(reader.integer(json, "$", "set", IntegerRange::of<int>()), 0);
  EXPECT_EQ(first_error(reader),
            "r: $.set: expected an integer in [-2147483648, 2147483647], got 4294967296");
}

TEST(JsonReader, UnsignedIntegersCoverAllSixtyFourBitsAndRejectNegatives) {
  const Json json = Json::parse(R"({"id":18446744073709551615,"small":3,"neg":-1})");
  JsonReader reader("r");
  EXPECT_EQ(reader.unsigned_integer(json, "$", "id"), 18446744073709551615ull);
  EXPECT_EQ(reader.optional_unsigned(Json{{"small", 3}}, "$", "small"), 3u);
  EXPECT_FALSE(reader.optional_unsigned(json, "$", "absent"));
  EXPECT_TRUE(reader.ok());
  EXPECT_FALSE(reader.optional_unsigned(json, "$", "neg"));
  EXPECT_EQ(first_error(reader), "r: $.neg: expected a non-negative 64-bit integer, got -1");
}

TEST(JsonReader, ARequiredArrayOfStringsNamesTheWrongElement) {
  const Json json = Json::parse(R"({"kernels":["a",7],"calls":{}})");
  JsonReader reader("r");
  EXPECT_EQ(reader.strings(json, "$", "kernels", Emptiness::allowed),
            (std::vector<std::string>{"a", ""}));
  EXPECT_EQ(first_error(reader), "r: $.kernels[1]: expected a string, got integer");
  JsonReader arrays("r");
  EXPECT_FALSE(arrays.array_member(json, "$", "calls"));
  EXPECT_EQ(first_error(arrays), "r: $.calls: expected an array, got object");
  JsonReader missing("r");
  EXPECT_FALSE(missing.optional_array(json, "$", "absent"));
  EXPECT_TRUE(missing.ok());
  missing.strings(json, "$", "functions", Emptiness::allowed);
  EXPECT_EQ(first_error(missing), "r: $: missing required key \"functions\"");
}

enum class Switch : std::uint8_t { off = 1, on = 2 };
std::string_view to_string(Switch position) {
  return position == Switch::off ? "off" : "on";
}

TEST(JsonReader, AnEnumeratorIsReadByTheNameItsWriterSpells) {
  const Json json = Json::parse(R"({"a":"on","b":"half","c":3})");
  JsonReader reader("r");
  EXPECT_EQ((reader.enumerator<Switch, 2>(json, "$", "a", to_string)), Switch::on);
  EXPECT_FALSE((reader.optional_enumerator<Switch, 2>(json, "$", "absent", to_string)));
  EXPECT_TRUE(reader.ok());
  EXPECT_FALSE((reader.enumerator<Switch, 2>(json, "$", "b", to_string)));
  EXPECT_EQ(first_error(reader), "r: $.b: expected one of \"off\", \"on\", got \"half\"");
  JsonReader typed("r");
  EXPECT_FALSE((typed.optional_enumerator<Switch, 2>(json, "$", "c", to_string)));
  EXPECT_EQ(first_error(typed), "r: $.c: expected one of \"off\", \"on\", got integer");
}

TEST(JsonReader, NullableNumbersAndBooleansReadNullAsAbsentAndRejectOtherTypes) {
  const Json json = Json::parse(R"({"speedup":null,"cost":0.5,"executed":true,"bad":"1.5"})");
  JsonReader reader("r");
  EXPECT_FALSE(reader.nullable_number(json, "$", "speedup"));
  EXPECT_FALSE(reader.nullable_number(json, "$", "absent"));
  EXPECT_EQ(reader.nullable_number(json, "$", "cost"), 0.5);
  EXPECT_EQ(reader.nullable_boolean(json, "$", "executed"), true);
  EXPECT_TRUE(reader.ok());
  EXPECT_FALSE(reader.nullable_number(json, "$", "bad"));
  EXPECT_EQ(first_error(reader), "r: $.bad: expected a number or null, got string");
  JsonReader booleans("r");
  EXPECT_FALSE(booleans.nullable_boolean(json, "$", "cost"));
  EXPECT_EQ(first_error(booleans), "r: $.cost: expected a boolean or null, got number");
}

} // namespace
} // namespace ptxbench::util
