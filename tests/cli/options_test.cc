#include "options.h"

#include <gtest/gtest.h>

namespace kiln::cli {
namespace options_test {

TEST(Options, ParsesShapes) {
  auto s = parse_shapes("--shapes", "input:1x3x224x224,mask:8x128");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->at("input"), (Dims{1, 3, 224, 224}));
  EXPECT_EQ(s->at("mask"), (Dims{8, 128}));
}

TEST(Options, ParsesQuotedNamesWithColonsAndCommas) {
  auto s = parse_shapes("--shapes", "'in:0':1x3,\"a,b\":4");
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  EXPECT_EQ(s->at("in:0"), (Dims{1, 3}));
  EXPECT_EQ(s->at("a,b"), (Dims{4}));
  auto unquoted = parse_shapes("--shapes", "in:0:2x2");
  ASSERT_TRUE(unquoted.is_ok());
  EXPECT_EQ(unquoted->at("in:0"), (Dims{2, 2}));
}

TEST(Options, ScalarShape) {
  auto s = parse_shapes("--shapes", "t:scalar");
  ASSERT_TRUE(s.is_ok());
  EXPECT_TRUE(s->at("t").empty());
}

TEST(Options, RejectsBadShapesNamingTheFlagAndPart) {
  for (const char* bad : {"input", "input:", "input:1x-3", "input:1xx3", "input:1x3a", ":1x3",
                          "a:1,a:2", "'open:1x3", "x:99999999999999999999999"}) {
    auto s = parse_shapes("--shapes", bad);
    ASSERT_FALSE(s.is_ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("--shapes"), std::string::npos) << s.status().message();
  }
}

TEST(Options, ParsesNamedFiles) {
  auto f = parse_named_files("--loadInputs", "input:data/x.npy,ids:ids.bin");
  ASSERT_TRUE(f.is_ok());
  EXPECT_EQ(f->at("input"), "data/x.npy");
  EXPECT_EQ(f->at("ids"), "ids.bin");
  EXPECT_FALSE(parse_named_files("--loadInputs", "input:").is_ok());
  EXPECT_FALSE(parse_named_files("--loadInputs", "input.npy").is_ok());
}

}  // namespace options_test
}  // namespace kiln::cli
