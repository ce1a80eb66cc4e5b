// Reading and writing valid .npy files: round trips, hand-written files of every header version,
// byte order and memory order, and the atomic write.

#include "io/npy.h"

#include <gtest/gtest.h>

#include <cstring>

#include "io/io_test_util.h"

namespace kiln::io {
namespace {

using testing::npy_bytes;
using testing::ScratchDir;

constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                                DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                                DType::kU16, DType::kU32, DType::kU64, DType::kBool};

// A tensor whose bytes follow a pattern that differs between elements and between bytes.
Tensor patterned(DType dtype, const Dims& dims) {
  Tensor t(dtype, dims);
  auto* b = static_cast<unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) {
    b[i] = dtype == DType::kBool ? (i % 3 == 0) : static_cast<unsigned char>(i * 37 + 11);
  }
  return t;
}

void expect_same_bytes(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.dims(), b.dims());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  if (a.nbytes() > 0) {
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
  }
}

Tensor parse_ok(std::string_view bytes) {
  Result<Tensor> t = parse_npy(bytes, "test.npy");
  EXPECT_TRUE(t.is_ok()) << t.status().to_string();
  return t.is_ok() ? *t : Tensor();
}

TEST(Npy, RoundTripsEveryDTypeAndRank) {
  const std::vector<Dims> shapes = {{}, {0}, {5}, {2, 3}, {2, 0, 3}, {2, 3, 4}, {1, 2, 1, 3, 2}};
  for (DType dtype : kAllDTypes) {
    for (const Dims& dims : shapes) {
      SCOPED_TRACE(fmt::format("{}[{}]", dtype_name(dtype), dims_to_string(dims)));
      const Tensor t = patterned(dtype, dims);
      Result<std::string> bytes = serialize_npy(t);
      ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
      // numpy's layout: the data starts on a 64-byte boundary right after the header's '\n'.
      const size_t data_offset = bytes->size() - t.nbytes();
      EXPECT_EQ(data_offset % 64, 0u);
      EXPECT_EQ((*bytes)[data_offset - 1], '\n');
      expect_same_bytes(parse_ok(*bytes), t);
    }
  }
}

TEST(Npy, RoundTripsThroughFiles) {
  ScratchDir dir;
  for (DType dtype : kAllDTypes) {
    const Tensor t = patterned(dtype, {3, 4});
    const auto path = dir / fmt::format("{}.npy", dtype_name(dtype));
    ASSERT_TRUE(write_npy(path, t).is_ok());
    Result<Tensor> back = read_npy(path);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    expect_same_bytes(*back, t);
  }
}

TEST(Npy, SerializesTheExactBytesNumpyWould) {
  const std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" +
                               std::string(60, ' ') + "\n" +
                               std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);  // 1.0f, -2.0f
  Result<std::string> bytes = serialize_npy(Tensor::from_vector<float>({2}, {1.0f, -2.0f}));
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(*bytes, expected);

  const std::string scalar = std::string("\x93NUMPY\x01\x00\x76\x00", 10) +
                             "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" +
                             std::string(62, ' ') + "\n\x01";
  bytes = serialize_npy(Tensor::scalar<bool>(true));
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(*bytes, scalar);
}

TEST(Npy, SwitchesToVersion2ForHugeHeaders) {
  const Tensor t = patterned(DType::kI16, Dims(30000, 1));  // "(1, 1, ...)" is ~90 KB of header
  Result<std::string> bytes = serialize_npy(t);
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ((*bytes)[6], '\x02');
  expect_same_bytes(parse_ok(*bytes), t);
}

TEST(Npy, ReadsAFileWrittenByNumpy) {
  // np.save(f, np.array([[1, 2, 3], [4, 5, 6]], dtype='>i4')), numpy 1.24.
  const std::string file =
      std::string("\x93NUMPY\x01\x00v\x00", 10) +
      "{'descr': '>i4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(58, ' ') + "\n" +
      std::string("\0\0\0\x01\0\0\0\x02\0\0\0\x03\0\0\0\x04\0\0\0\x05\0\0\0\x06", 24);
  const Tensor t = parse_ok(file);
  ASSERT_EQ(t.desc(), "int32[2x3]");
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, ReadsFortranOrderAsRowMajor) {
  // np.save(f, np.asfortranarray(np.array([[1, 2, 3], [4, 5, 6]], dtype='<i2'))), numpy 1.24.
  const std::string file = std::string("\x93NUMPY\x01\x00v\x00", 10) +
                           "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }" +
                           std::string(59, ' ') + "\n" +
                           std::string("\x01\0\x04\0\x02\0\x05\0\x03\0\x06\0", 12);
  const Tensor t = parse_ok(file);
  ASSERT_EQ(t.desc(), "int16[2x3]");
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, TransposesRank3FortranBigEndian) {
  // Element (i, j, k) of a 2x3x4 array is 100i + 10j + k; column-major puts it at i + 2j + 6k.
  std::string data(24 * 4, '\0');
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        const int offset = (i + 2 * j + 6 * k) * 4;
        data[offset + 3] = static_cast<char>(100 * i + 10 * j + k);  // big-endian: low byte last
      }
    }
  }
  const Tensor t =
      parse_ok(npy_bytes(1, "{'descr': '>u4', 'fortran_order': True, 'shape': (2, 3, 4)}\n", data));
  ASSERT_EQ(t.desc(), "uint32[2x3x4]");
  for (int64_t n = 0; n < 24; ++n) {
    EXPECT_EQ(t.value_as_int(n), 100 * (n / 12) + 10 * (n / 4 % 3) + n % 4) << n;
  }
}

TEST(Npy, ReadsVersion2And3Headers) {
  const std::string data("\x00\x00\x80\x3f\x00\x00\x40\xc0", 8);  // 1.0f, -3.0f
  for (int major : {2, 3}) {
    const Tensor t =
        parse_ok(npy_bytes(major, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data));
    ASSERT_EQ(t.desc(), "float32[2]");
    EXPECT_EQ(t.data<float>()[0], 1.0f);
    EXPECT_EQ(t.data<float>()[1], -3.0f);
  }
}

TEST(Npy, ConvertsBigEndianFloats) {
  const Tensor f4 = parse_ok(npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}",
                                       std::string("\x3f\x80\x00\x00", 4)));
  EXPECT_EQ(f4.data<float>()[0], 1.0f);
  const Tensor f2 = parse_ok(npy_bytes(1, "{'descr': '>f2', 'fortran_order': False, 'shape': ()}",
                                       std::string("\xc0\x00", 2)));
  EXPECT_EQ(static_cast<float>(f2.data<Half>()[0]), -2.0f);
  const Tensor f8 = parse_ok(npy_bytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': ()}",
                                       std::string("\x40\x09\x21\xfb\x54\x44\x2d\x18", 8)));
  EXPECT_EQ(f8.data<double>()[0], 3.141592653589793);
  const Tensor i8 = parse_ok(npy_bytes(1, "{'descr': '>i8', 'fortran_order': False, 'shape': ()}",
                                       std::string("\xff\xff\xff\xff\xff\xff\xff\xfe", 8)));
  EXPECT_EQ(i8.data<int64_t>()[0], -2);
}

TEST(Npy, AcceptsEquivalentHeaderSpellings) {
  const std::string data("\x05\x00\x07\x00", 4);
  for (std::string_view header : {
           "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }        \n",
           "{\"shape\": (2,), \"descr\": \"<i2\", \"fortran_order\": False}",
           "{ 'fortran_order' :False,'shape':( 2 , ),'descr':'<i2' }\r\n",
           "{'descr': 'i2', 'fortran_order': False, 'shape': (2L,)}",  // Python 2 long, no order
           "{'descr': '=i2', 'fortran_order': False, 'shape': (+2,)}",
       }) {
    SCOPED_TRACE(header);
    const Tensor t = parse_ok(npy_bytes(1, header, data));
    EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{5, 7}));
  }
  EXPECT_EQ(
      parse_ok(npy_bytes(1, "{'descr': '?', 'fortran_order': False, 'shape': ()}", "\x01")).dtype(),
      DType::kBool);
}

TEST(Npy, ReadsZeroSizeAndScalarArrays) {
  const Tensor empty =
      parse_ok(npy_bytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 0, 2), }\n", ""));
  EXPECT_EQ(empty.desc(), "float64[3x0x2]");
  const Tensor scalar = parse_ok(npy_bytes(
      1, "{'descr': '|i1', 'fortran_order': False, 'shape': (), }\n", std::string("\xfd", 1)));
  EXPECT_EQ(scalar.desc(), "int8[scalar]");
  EXPECT_EQ(scalar.value_as_int(0), -3);
}

TEST(Npy, IgnoresBytesAfterTheData) {
  // Documented behaviour (as numpy): np.save can append several arrays to one file.
  const Tensor t = parse_ok(npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,)}",
                                      "\x09\x08 trailing bytes"));
  EXPECT_EQ(t.to_int64_vector(), (std::vector<int64_t>{9, 8}));
}

TEST(Npy, NormalisesBoolBytes) {
  const Tensor t = parse_ok(npy_bytes(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}",
                                      std::string("\x00\x02\xff", 3)));
  const auto* b = static_cast<const unsigned char*>(t.raw_data());
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 1);
}

TEST(NpyWrite, ReplacesAnExistingFile) {
  ScratchDir dir;
  const auto path = dir / "x.npy";
  testing::write_bytes(path, std::string(1000, 'z'));
  ASSERT_TRUE(write_npy(path, Tensor::from_vector<int32_t>({2}, {4, 5})).is_ok());
  Result<Tensor> back = read_npy(path);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->to_int64_vector(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"x.npy"});  // no temporary left behind
}

TEST(NpyWrite, LeavesNothingBehindOnFailure) {
  ScratchDir dir;
  const Tensor t = Tensor::from_vector<float>({1}, {1.0f});

  // The final name is a directory: the rename fails after the data was written.
  std::filesystem::create_directory(dir / "taken.npy");
  testing::write_bytes(dir / "taken.npy" / "inner", "keep");
  Status s = write_npy(dir / "taken.npy", t);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.to_string();
  EXPECT_NE(s.message().find("taken.npy"), std::string::npos) << s.message();
  EXPECT_EQ(testing::read_bytes(dir / "taken.npy" / "inner"), "keep");

  // The folder does not exist.
  s = write_npy(dir / "missing" / "x.npy", t);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.to_string();
  EXPECT_NE(s.message().find("missing"), std::string::npos) << s.message();

  // A dtype numpy lacks: nothing is created.
  s = write_npy(dir / "bf16.npy", Tensor(DType::kBF16, {2}));
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("bf16.npy"), std::string::npos) << s.message();

  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken.npy"});
}

TEST(NpyWrite, SerializeRejectsDTypesNumpyLacks) {
  EXPECT_EQ(serialize_npy(Tensor(DType::kBF16, {1})).status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(serialize_npy(Tensor()).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace kiln::io
