// Malformed and unsupported .npy files: each must give a Status naming the file and the problem,
// never a crash or an out-of-bounds read.

#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "io/npy.h"

namespace kiln::io {
namespace {

using testing::npy_bytes;

constexpr std::string_view kName = "bad.npy";

// Parses `bytes`, expects `code` and a message naming the file and containing `fragment`.
void expect_error(std::string_view bytes, StatusCode code, std::string_view fragment) {
  Result<Tensor> t = parse_npy(bytes, kName);
  ASSERT_FALSE(t.is_ok()) << "parsed as " << t->desc();
  EXPECT_EQ(t.status().code(), code) << t.status().to_string();
  EXPECT_NE(t.status().message().find(kName), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find(fragment), std::string::npos) << t.status().message();
}

std::string with_header(std::string_view header, std::string_view data = "") {
  return npy_bytes(1, header, data);
}

// A valid file: int16 [[1, 2], [3, 4]] behind a v1 header.
std::string valid_file() {
  return with_header("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }\n",
                     std::string("\x01\0\x02\0\x03\0\x04\0", 8));
}

TEST(NpyErrors, BadMagic) {
  expect_error("PK\x03\x04 an npz is a zip", StatusCode::kCorrupt, "bad magic");
  std::string file = valid_file();
  file[5] = 'Z';
  expect_error(file, StatusCode::kCorrupt, "bad magic");
  expect_error("", StatusCode::kCorrupt, "truncated");
}

TEST(NpyErrors, UnsupportedVersion) {
  std::string file = valid_file();
  file[6] = '\x04';
  expect_error(file, StatusCode::kUnsupported, "version 4.0");
  file[6] = '\x01';
  file[7] = '\x01';
  expect_error(file, StatusCode::kUnsupported, "version 1.1");
  file[6] = '\x00';
  file[7] = '\x00';
  expect_error(file, StatusCode::kUnsupported, "version 0.0");
}

TEST(NpyErrors, TruncatedPreamble) {
  expect_error(std::string("\x93NUMPY\x01", 7), StatusCode::kCorrupt, "format version");
  expect_error(std::string("\x93NUMPY\x01\x00\x10", 9), StatusCode::kCorrupt, "length field");
  expect_error(std::string("\x93NUMPY\x02\x00\x10\x00\x00", 11), StatusCode::kCorrupt,
               "length field");
}

TEST(NpyErrors, HeaderLengthBeyondTheFile) {
  std::string file = valid_file();
  file[8] = '\xff';
  file[9] = '\x7f';
  expect_error(file, StatusCode::kCorrupt, "claims 32767 bytes");
  // Version 2 with a 4 GiB length: must not be trusted for allocation or reading.
  expect_error(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14), StatusCode::kCorrupt,
               "claims 4294967295 bytes");
}

TEST(NpyErrors, UnsupportedDescr) {
  const std::pair<std::string_view, std::string_view> cases[] = {{"'<U10'", "unicode strings"},
                                                                 {"'|S4'", "byte strings"},
                                                                 {"'|O'", "Python objects"},
                                                                 {"'<c8'", "complex"},
                                                                 {"'<M8[ns]'", "datetimes"},
                                                                 {"'<f16'", "extended precision"},
                                                                 {"'<i3'", "no 3-byte 'i' type"},
                                                                 {"'|b2'", "no 2-byte 'b' type"},
                                                                 {"''", "no type"},
                                                                 {"'<'", "no type"},
                                                                 {"'<V8'", "raw or structured"}};
  for (const auto& [descr, why] : cases) {
    SCOPED_TRACE(descr);
    expect_error(
        with_header(fmt::format("{{'descr': {}, 'fortran_order': False, 'shape': (1,)}}", descr),
                    std::string(64, '\0')),
        StatusCode::kUnsupported, why);
  }
  expect_error(
      with_header("{'descr': [('a', '<f4'), ('b', '<i8')], 'fortran_order': False, 'shape': (1,)}",
                  std::string(12, '\0')),
      StatusCode::kUnsupported, "structured");
}

TEST(NpyErrors, BadShape) {
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}"),
               StatusCode::kCorrupt, "negative");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (4294967296, 4294967296)}"),
               StatusCode::kCorrupt, "overflows");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,)}"),
               StatusCode::kCorrupt, "GiB");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (99999999999999999999,)}"),
               StatusCode::kCorrupt, "does not fit in 64 bits");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2.5,)}"),
               StatusCode::kCorrupt, "expected an integer");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}"),
               StatusCode::kCorrupt, "'shape' is a list");
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}"),
               StatusCode::kCorrupt, "'shape' is an integer");  // no comma: not a tuple
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}"),
               StatusCode::kCorrupt, "element that is a string");
}

TEST(NpyErrors, DataShorterThanTheShape) {
  expect_error(with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}",
                           std::string(23, '\0')),
               StatusCode::kCorrupt, "int32[2x3] needs 24 bytes but only 23");
  // A 32 GiB claim in a tiny file fails before anything that size is allocated.
  expect_error(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (8589934592,)}"),
               StatusCode::kCorrupt, "needs 34359738368 bytes but only 0");
}

TEST(NpyErrors, MalformedHeaderDict) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"", "expected a value, found end of header"},
      {"   \n", "expected a value"},
      {"[1, 2]", "header is a list"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
      {"{'fortran_order': False, 'shape': ()}", "no 'descr' key"},
      {"{'descr': '<f4', 'shape': ()}", "no 'fortran_order' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}",
       "unexpected key 'extra'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", "twice"},
      {"{1: '<f4'}", "key that is an integer"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", "expected True or False"},
      {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': ()}", "unexpected name 'Maybe'"},
      {"{'descr': 4, 'fortran_order': False, 'shape': ()}", "'descr' is an integer"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': ()}", "expected ',' or '}'"},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '<f4\n', 'fortran_order': False, 'shape': ()}", "unterminated string"},
      {"{'descr' '<f4'}", "expected ':' after a dict key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()", "expected ',' or '}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2}", "expected ',' or ')'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk", "unexpected text after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': ()}}", "unexpected text after"},
      {std::string_view("{'descr'\0: '<f4'}", 17), "found byte 0x00"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (-,)}", "expected a digit"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (,)}", "expected a value, found ','"},
  };
  for (const auto& [header, fragment] : cases) {
    SCOPED_TRACE(header);
    expect_error(with_header(header), StatusCode::kCorrupt, fragment);
  }
}

TEST(NpyErrors, DeepNestingIsBounded) {
  const std::string deep = "{'descr': " + std::string(10000, '(') + std::string(10000, ')') + "}";
  expect_error(with_header(deep), StatusCode::kCorrupt, "nested deeper than");
}

TEST(NpyErrors, EveryTruncationIsAnError) {
  const std::string file = valid_file();
  ASSERT_TRUE(parse_npy(file, kName).is_ok());
  for (size_t n = 0; n < file.size(); ++n) {
    // A heap copy of exactly n bytes, so that AddressSanitizer catches any read past the end.
    const std::unique_ptr<char[]> copy(new char[n]);
    std::memcpy(copy.get(), file.data(), n);
    Result<Tensor> t = parse_npy(std::string_view(copy.get(), n), kName);
    EXPECT_FALSE(t.is_ok()) << "prefix of " << n << " bytes parsed";
    if (!t.is_ok()) {
      EXPECT_EQ(t.status().code(), StatusCode::kCorrupt) << n << ": " << t.status().to_string();
    }
  }
}

TEST(NpyErrors, SingleByteCorruptionNeverCrashes) {
  // Every byte of a valid file replaced by a few interesting values: parse must return (OK or an
  // error) and an OK result must hold a consistent tensor.
  const std::string file = valid_file();
  for (size_t i = 0; i < file.size(); ++i) {
    for (char v : std::string_view("\x00\x01\x7f\x80\xff()',9-{", 12)) {
      std::string mutated = file;
      mutated[i] = v;
      Result<Tensor> t = parse_npy(mutated, kName);
      if (t.is_ok()) {
        EXPECT_TRUE(check_dims(t->dims(), t->dtype(), "t").is_ok());
      }
    }
  }
}

TEST(NpyErrors, ReadNpyNamesMissingFilesAndFolders) {
  testing::ScratchDir dir;
  Result<Tensor> t = read_npy(dir / "absent.npy");
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("absent.npy"), std::string::npos);
  t = read_npy(dir.path());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("directory"), std::string::npos);
  testing::write_bytes(dir / "short.npy", valid_file().substr(0, 20));
  t = read_npy(dir / "short.npy");
  EXPECT_EQ(t.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(t.status().message().find("short.npy"), std::string::npos);
}

}  // namespace
}  // namespace kiln::io
