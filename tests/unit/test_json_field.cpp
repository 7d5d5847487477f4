// The checked JSON accessor (json_field.hpp): every field of the wrong kind or range is one
// JsonFieldError (a UsageError, exit 2) naming the file, the field's path and what was expected;
// never nlohmann's type_error.
#include <limits>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scalebench/base/error.hpp"
#include "scalebench/base/json_field.hpp"

using namespace scalebench;
using nlohmann::json;

namespace {

const json kDoc = json::parse(R"({
  "name": "node", "count": 3, "rate": 2.5, "flag": true, "nothing": null, "big": 1e300, "neg": -4,
  "half": 2.5, "huge": 18446744073709551615, "list": [{"a": 1}, {"a": "x"}], "texts": ["a", 7],
  "obj": {"inner": {"x": [1, 2, 3]}}
})");

JsonField doc() { return JsonField(kDoc, JsonOrigin{"profile p.json", "run `scalebench calibrate` again"}); }

// The message of what `f` throws, which must be a JsonFieldError.
template <class F>
std::string refusal(F f) {
  try {
    f();
  } catch (const JsonFieldError& e) {
    EXPECT_EQ(e.code(), ExitCode::usage);
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a JsonFieldError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "nothing thrown";
  return "";
}

TEST(JsonField, RightKindsAreRead) {
  const JsonField f = doc();
  EXPECT_EQ(f.text("name"), "node");
  EXPECT_EQ(f.whole("count", 0, 10), 3);
  EXPECT_DOUBLE_EQ(f.number("rate"), 2.5);
  EXPECT_TRUE(f.flag("flag"));
  EXPECT_EQ(f.sub("obj").sub("inner").list("x").size(), 3U);
  EXPECT_EQ(f.keys().size(), kDoc.size());
  EXPECT_TRUE(f.has("name"));
  EXPECT_FALSE(f.has("nothing"));  // null is absent
  EXPECT_FALSE(f.has("missing"));
}

TEST(JsonField, WrongKindsNameTheFileTheFieldAndWhatWasExpected) {
  const JsonField f = doc();
  EXPECT_EQ(refusal([&] { (void)f.text("count"); }),
            "profile p.json: count must be a string (got a number); run `scalebench calibrate` again");
  EXPECT_EQ(refusal([&] { (void)f.number("name"); }),
            "profile p.json: name must be a number (got a string); run `scalebench calibrate` again");
  EXPECT_NE(refusal([&] { (void)f.sub("list"); }).find("list must be an object (got a list)"), std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.list("obj"); }).find("obj must be a list (got an object)"), std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.flag("nothing"); }).find("nothing must be true or false (got null)"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.text("missing"); }).find("missing is missing"), std::string::npos);
  // The path of a value deep inside: "list[1].a".
  EXPECT_NE(refusal([&] { (void)f.list("list")[1].number("a"); }).find("profile p.json: list[1].a must be a number"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.sub("obj").sub("inner").sub("x"); }).find("obj.inner.x must be an object"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.texts("texts"); }).find("texts[1] must be a string (got a number)"),
            std::string::npos);
  // A field asked of a value that is not an object.
  EXPECT_NE(refusal([&] {
              (void)f.sub("obj").sub("inner").list("x")[0].text("y");
            }).find("obj.inner.x[0] must be an object (got a number)"),
            std::string::npos);
}

TEST(JsonField, RangesAndWholeNumbers) {
  const JsonField f = doc();
  EXPECT_NE(refusal([&] { (void)f.number_in("neg", 0, 10, "watts"); }).find("neg must be watts in [0, 10] (got -4)"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.number_in("big", 0, 1e9, "a rate"); }).find("big must be a rate in [0, 1e+09]"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.whole("half", 0, 10); }).find("half must be a whole number (got 2.5)"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)f.whole("big", 0, std::numeric_limits<std::int64_t>::max());
            }).find("big must be a whole number in"),
            std::string::npos);
  EXPECT_NE(refusal([&] {
              (void)f.whole("huge", 0, std::numeric_limits<std::int64_t>::max());
            }).find("huge must be a whole number in"),
            std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.whole("neg", 0, 10); }).find("in [0, 10] (got -4)"), std::string::npos);
}

TEST(JsonField, OptionalFormsCheckWhatIsThere) {
  const JsonField f = doc();
  EXPECT_EQ(f.text_or("missing", "d"), "d");
  EXPECT_EQ(f.text_or("nothing", "d"), "d");
  EXPECT_DOUBLE_EQ(f.number_or("missing", 7), 7);
  EXPECT_EQ(f.whole_or("nothing", 0, 5, 4), 4);
  EXPECT_FALSE(f.flag_or("missing", false));
  EXPECT_NE(refusal([&] { (void)f.text_or("count", ""); }).find("count must be a string"), std::string::npos);
  EXPECT_NE(refusal([&] { (void)f.number_in_or("neg", 0, 1, "a fraction", 0); }).find("neg must be a fraction"),
            std::string::npos);
}

TEST(JsonField, FieldWithoutFileAndAdvice) {
  try {
    (void)doc().sub("obj").text("inner");
    FAIL() << "nothing thrown";
  } catch (const JsonFieldError& e) {
    EXPECT_EQ(e.field(), "obj.inner must be a string (got an object)");
  }
}

TEST(JsonField, TooManyEntriesAndTheTopLevel) {
  const json many = json::parse(R"({"l": [1, 2, 3, 4, 5]})");
  const JsonField f(many, JsonOrigin{"f.json", "", 4});
  EXPECT_EQ(refusal([&] { (void)f.list("l"); }), "f.json: l holds 5 entries; at most 4 are read");
  const json scalar = 5;
  EXPECT_EQ(refusal([&] {
              (void)JsonField(scalar, JsonOrigin{"f.json", ""}).text("a");
            }),
            "f.json: the top level must be an object (got a number)");
}

TEST(JsonField, TextDepthSkipsStrings) {
  EXPECT_EQ(json_text_depth("{}"), 1);
  EXPECT_EQ(json_text_depth(R"({"a": [[1], {"b": 2}]})"), 3);
  EXPECT_EQ(json_text_depth(R"({"a": "[[[[{{\"]]"})"), 1);
  EXPECT_EQ(json_text_depth(std::string(100000, '[')), 100000);
  EXPECT_EQ(json_kind(json::array()), "a list");
  EXPECT_EQ(json_kind(json(true)), "true or false");
}

}  // namespace

// What scalebench writes is text: a string that is not UTF-8 (a path or an environment variable
// as the system gave it) is written with U+FFFD for its bad bytes instead of failing the write;
// an error message is one printable line, whatever it quotes.
TEST(JsonField, TextWrittenIsUtf8AndMessagesArePrintable) {
  const json j = {{"path", std::string("/tmp/a\xff"
                                       "b")},
                  {"ok", "µs ×"}};
  EXPECT_EQ(json_text(j), "{\"ok\":\"µs ×\",\"path\":\"/tmp/a\xEF\xBF\xBD"
                          "b\"}");
  EXPECT_EQ(printable("a\nb\r\x1b[31mc\td"), "a\\x0ab\\x0d\\x1b[31mc\\x09d");
  EXPECT_EQ(printable("µs × \xf0\x9f\x98\x80"), "µs × \xf0\x9f\x98\x80");  // UTF-8 stays as it is
  // A stray continuation byte, an overlong form, a surrogate, a cut sequence: one U+FFFD per byte.
  EXPECT_EQ(printable("\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82"),
            "\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(bad_utf8_at("ab\xc3\xa9\xff"), 4U);
  EXPECT_EQ(bad_utf8_at("ab\xc3\xa9"), std::string_view::npos);
  EXPECT_EQ(UsageError("bad 'x\ny'").what(), std::string("bad 'x\\x0ay'"));
}
