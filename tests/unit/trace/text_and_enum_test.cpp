#include "trace/json_io.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

using namespace ptxbench;
using namespace ptxbench::trace;

namespace {
std::string spell(double value) {
  return dump_compact(Json(value));
}
} // namespace

TEST(DumpCompact, FloatsAreSpelledAsPydanticWritesThem) {
  EXPECT_EQ(spell(2.0), "2.0");
  EXPECT_EQ(spell(0.0), "0.0");
  EXPECT_EQ(spell(-0.5), "-0.5");
  EXPECT_EQ(spell(0.1), "0.1");
  EXPECT_EQ(spell(1e-5), "0.00001");
  EXPECT_EQ(spell(1.5e-5), "0.000015");
  EXPECT_EQ(spell(1e-7), "1e-7");
  EXPECT_EQ(spell(1.25e-7), "1.25e-7");
  EXPECT_EQ(spell(1e15), "1000000000000000.0");
  EXPECT_EQ(spell(1e16), "1e16");
  EXPECT_EQ(spell(1.2345678901234568e20), "1.2345678901234568e20");
  EXPECT_EQ(spell(0.08838834764831843), "0.08838834764831843");
  EXPECT_EQ(spell(123.456), "123.456");
}

TEST(DumpCompact, NonFiniteFloatsBecomeStrings) {
  EXPECT_EQ(spell(std::numeric_limits<double>::quiet_NaN()), "\"NaN\"");
  EXPECT_EQ(spell(std::numeric_limits<double>::infinity()), "\"Infinity\"");
  EXPECT_EQ(spell(-std::numeric_limits<double>::infinity()), "\"-Infinity\"");
}

TEST(DumpCompact, StringsEscapeControlsKeepUtf8AndRepairInvalidBytes) {
  EXPECT_EQ(dump_compact(Json("a\"b\\c\n\t\x01")), R"("a\"b\\c\n\t\u0001")");
  EXPECT_EQ(dump_compact(Json("∑ é /")), "\"∑ é /\"");
  Json bad = Json::string_t("x\xFFy");
  EXPECT_EQ(dump_compact(bad), "\"x\xEF\xBF\xBDy\"");
}

TEST(DumpCompact, ObjectsKeepKeyOrderWithoutSpaces) {
  Json json = Json::parse(R"({"z": 1, "a": [true, null, {}], "m": []})");
  EXPECT_EQ(dump_compact(json), R"({"z":1,"a":[true,null,{}],"m":[]})");
  EXPECT_EQ(dump_pretty(json),
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null,\n    {}\n  ],\n  \"m\": []\n}");
}

TEST(ParseJsonText, BareTokensOutsideStringsBecomeStrings) {
  auto json =
      parse_json_text(R"({"a":NaN,"b":[Infinity,-Infinity],"c":"NaN Infinity","d":"\"NaN"})", "x");
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_EQ((*json)["a"], "NaN");
  EXPECT_EQ((*json)["b"][1], "-Infinity");
  EXPECT_EQ((*json)["c"], "NaN Infinity");
  EXPECT_EQ((*json)["d"], "\"NaN");
}

TEST(ParseJsonText, TokensInsideLongerWordsAreNotRewritten) {
  EXPECT_FALSE(parse_json_text(R"({"a":NaNa})", "x"));
  EXPECT_FALSE(parse_json_text(R"({"a":xNaN})", "x"));
  EXPECT_FALSE(parse_json_text(R"({"a":nan})", "x"));
}

TEST(ParseJsonText, ErrorsGiveOriginLineAndColumn) {
  auto json = parse_json_text("{\n  \"a\": 1,\n  \"b\": NaN,\n  \"c\": oops\n}", "defs/x.json");
  ASSERT_FALSE(json);
  EXPECT_EQ(json.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(json.error().message.find("defs/x.json: invalid JSON at line 4, column 8"),
            std::string::npos)
      << json.error().message;
}

TEST(Enums, EverySpellingRoundTrips) {
  for (int i = 1; i <= 11; ++i) {
    auto dtype = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(to_string(dtype)), dtype);
  }
  for (int i = 1; i <= 7; ++i) {
    auto status = static_cast<EvaluationStatus>(i);
    EXPECT_EQ(parse_status(to_string(status)), status);
  }
  for (int i = 1; i <= 5; ++i) {
    auto language = static_cast<Language>(i);
    EXPECT_EQ(parse_language(to_string(language)), language);
  }
  EXPECT_EQ(to_string(DType::boolean), "bool");
  EXPECT_EQ(to_string(EvaluationStatus::incorrect_numerical), "INCORRECT_NUMERICAL");
  EXPECT_EQ(to_string(Binding::tvm_ffi), "tvm-ffi");
  EXPECT_EQ(to_string(Binding::none), "");
  EXPECT_FALSE(parse_dtype("bf16"));
  EXPECT_FALSE(parse_status("passed"));
}

TEST(Enums, DtypeBitsMatchTheStorageSizes) {
  const std::size_t expected[] = {32, 16, 16, 8, 8, 4, 64, 32, 16, 8, 8};
  for (int i = 1; i <= 11; ++i)
    EXPECT_EQ(dtype_bits(static_cast<DType>(i)), expected[i - 1]);
}

TEST(SolutionHash, MatchesTheReferenceTestVector) {
  Solution solution;
  solution.name = "ignored";
  solution.definition = "d";
  solution.author = "ignored too";
  solution.spec.language = Language::cuda;
  solution.spec.entry_point = "kernel.cu::run";
  solution.spec.binding = Binding::tvm_ffi;
  solution.spec.target_hardware = {"H100"};
  solution.sources = {{"kernel.cu", "abc"}};
  EXPECT_EQ(solution_hash(solution), "0b55db0ef0bdac18792a4f457204c076efffe809");
  solution.spec.destination_passing_style = false;
  EXPECT_EQ(solution_hash(solution), "0b55db0ef0bdac18792a4f457204c076efffe809");
  EXPECT_EQ(unique_solution_name(solution), "ignored_0b55db0e");
}
