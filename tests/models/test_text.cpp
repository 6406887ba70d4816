// The text helpers every user-facing message goes through: the UTF-8 check (scenario strings
// and arguments end up in JSON) and one_line(), the form of every error the command line prints.
#include <gtest/gtest.h>

#include <string>

#include "models/text.hpp"

namespace waitlab::models::text {
namespace {

TEST(Text, InvalidUtf8FindsTheFirstBadByte) {
  constexpr auto npos = std::string_view::npos;
  EXPECT_EQ(invalid_utf8(""), npos);
  EXPECT_EQ(invalid_utf8("plain ascii"), npos);
  EXPECT_EQ(invalid_utf8("25\xc2\xb5s, 3\xe2\x82\xac, \xf0\x9f\x98\x80"), npos);  // µ, €, an emoji
  EXPECT_EQ(invalid_utf8("caf\xe9"), 3u);                                          // Latin-1
  EXPECT_EQ(invalid_utf8("ab\x9f"), 2u);                                           // a lone continuation byte
  EXPECT_EQ(invalid_utf8("\xc0\xaf"), 0u);                                         // overlong '/'
  EXPECT_EQ(invalid_utf8("\xe0\x80\xaf"), 0u);                                     // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8("x\xed\xa0\x80"), 1u);                                    // a surrogate
  EXPECT_EQ(invalid_utf8("\xf4\x90\x80\x80"), 0u);                                 // above U+10FFFF
  EXPECT_EQ(invalid_utf8("\xe2\x82"), 0u);                                         // cut short
  EXPECT_EQ(invalid_utf8("\xff"), 0u);
}

TEST(Text, OneLineEscapesWhatIsNotPrintable) {
  EXPECT_EQ(one_line("a plain message"), "a plain message");
  EXPECT_EQ(one_line("two\nlines\tand\r\x01\x7f"), "two\\nlines\\tand\\r\\x01\\x7f");
  EXPECT_EQ(one_line("caf\xe9 \x9f\xff"), "caf\\xe9 \\x9f\\xff");
  EXPECT_EQ(one_line("25\xc2\xb5s \xe2\x82\xac"), "25\xc2\xb5s \xe2\x82\xac");  // valid UTF-8 stays
  EXPECT_EQ(one_line("c1 \xc2\x9f"), "c1 \\xc2\\x9f");                             // a C1 control
  EXPECT_EQ(one_line(std::string("nul\0byte", 8)), "nul\\x00byte");
  EXPECT_EQ(one_line(std::string(10, 'x'), 4), "xxxx... (6 more bytes)");
  // A multi-byte character cut by the limit is shown as bytes, never half a character.
  EXPECT_EQ(one_line("ab\xe2\x82\xac", 3), "ab\\xe2... (2 more bytes)");
}

}  // namespace
}  // namespace waitlab::models::text
