// util/terminal.hpp: the terminal-safe form of untrusted text.
#include "util/terminal.hpp"

#include <gtest/gtest.h>

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
