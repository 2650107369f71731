// The non-finite number codec: the three spellings every writer uses, read back exactly by our
// wire formats and in any case by FlashInfer-Trace readers.
#include "util/json_number.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace ptxbench::util {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(JsonNumber, NonFiniteValuesAreWrittenAsTheThreeStrings) {
  EXPECT_EQ(number_json(kNaN).dump(), "\"NaN\"");
  EXPECT_EQ(number_json(kInf).dump(), "\"Infinity\"");
  EXPECT_EQ(number_json(-kInf).dump(), "\"-Infinity\"");
  EXPECT_EQ(number_json(0.25).dump(), "0.25");
  EXPECT_EQ(nonfinite_spelling(1.0), "");
}

TEST(JsonNumber, EveryValueComesBackAsItself) {
  for (double value : {0.0, -3.5, 1e300, kInf, -kInf}) {
    auto back = number_from_json(Json::parse(number_json(value).dump()), NonFiniteSpelling::exact);
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, value);
  }
  EXPECT_TRUE(std::isnan(*number_from_json(number_json(kNaN), NonFiniteSpelling::exact)));
}

TEST(JsonNumber, ExactReadersTakeOnlyTheThreeSpellings) {
  for (const char* text : {"nan", "inf", "infinity", "+Infinity", "-inf", "lots"})
    EXPECT_FALSE(number_from_json(Json(text), NonFiniteSpelling::exact)) << text;
  EXPECT_FALSE(number_from_json(Json(nullptr), NonFiniteSpelling::exact));
  EXPECT_FALSE(number_from_json(Json::object(), NonFiniteSpelling::any_case));
}

TEST(JsonNumber, AnyCaseReadersTakeOtherWritersSpellings) {
  EXPECT_TRUE(std::isnan(*number_from_json(Json("nan"), NonFiniteSpelling::any_case)));
  EXPECT_EQ(*number_from_json(Json("INF"), NonFiniteSpelling::any_case), kInf);
  EXPECT_EQ(*number_from_json(Json("+infinity"), NonFiniteSpelling::any_case), kInf);
  EXPECT_EQ(*number_from_json(Json("-Inf"), NonFiniteSpelling::any_case), -kInf);
  EXPECT_FALSE(number_from_json(Json("infinite"), NonFiniteSpelling::any_case));
}

} // namespace
} // namespace ptxbench::util
