// util/terminal.hpp: the terminal-safe form of untrusted text.
#include "util/terminal.hpp"

#include <gtest/gtest.h>
#include <string>

using ptxbench::util::printable;

TEST(Printable, EscapeSequencesBecomeVisibleAndNewlinesAndTabsStay) {
  EXPECT_EQ(printable("a\x1b[2Jb\n\tc\r\x07\x7f"), "a\\x1b[2Jb\n\tc\\x0d\\x07\\x7f");
}

TEST(Printable, C1ControlsInUtf8AreEscapedAndOtherUtf8IsKept) {
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m \xc3\xa9 \xe2\x80\x94"),
            "\\u009b31m \xc3\xa9 \xe2\x80\x94");
  EXPECT_EQ(printable("\xc2"), "\xc2") << "a lone lead byte is not a control";
}

using ptxbench::util::non_text_fraction;

TEST(NonTextFraction, SourceTextScoresZeroWhateverItsLineEndsOrUtf8) {
  EXPECT_EQ(non_text_fraction(""), 0.0);
  EXPECT_EQ(non_text_fraction("int main() {\r\n\treturn 0;\f\v}\n"), 0.0);
  EXPECT_EQ(non_text_fraction("// caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80\n"), 0.0);
}

TEST(NonTextFraction, ALatin1LiteralCountsOnlyItsOwnBytes) {
  const std::string source = "const char* s = \"caf\xe9\";\n"; // 26 bytes, one Latin-1 byte
  EXPECT_DOUBLE_EQ(non_text_fraction(source), 1.0 / static_cast<double>(source.size()));
}

TEST(NonTextFraction, MalformedUtf8AndControlsCountByteByByte) {
  EXPECT_EQ(non_text_fraction("\x80\xbf"), 1.0) << "stray continuation bytes";
  EXPECT_EQ(non_text_fraction("\xc0\xaf"), 1.0) << "overlong form";
  EXPECT_EQ(non_text_fraction("\xed\xa0\x80"), 1.0) << "a surrogate";
  EXPECT_EQ(non_text_fraction("\xe2\x80"), 1.0) << "cut short";
  EXPECT_EQ(non_text_fraction("\x1b\x7f"), 1.0);
}

TEST(NonTextFraction, BytesOfEveryValueScoreOverAThird) {
  std::string all;
  for (int round = 0; round < 4; ++round)
    for (int byte = 1; byte < 256; ++byte)
      all += static_cast<char>((byte * 37 + round * 11) % 255 + 1);
  EXPECT_GT(non_text_fraction(all), 0.34);
}
