#include "io/tensor_json.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "io/io_test_util.h"

namespace kiln::io {
namespace {

using nlohmann::json;

std::string dump_of(const Tensor& t, std::string_view name = "out") {
  Result<json> j = tensor_to_json(t, name);
  EXPECT_TRUE(j.is_ok()) << j.status().to_string();
  return j.is_ok() ? j->dump() : "";
}

TEST(TensorJson, MatchesTrtexecShape) {
  const Tensor t = Tensor::from_vector<float>({2, 2}, {0.1f, -2.5f, 1e-8f, 3.0f});
  EXPECT_EQ(dump_of(t, "prob"),
            R"({"dimensions":"2x2","name":"prob","values":[0.1,-2.5,1e-08,3.0]})");
}

TEST(TensorJson, WritesNonFiniteAsStrings) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor t = Tensor::from_vector<float>({3}, {std::nanf(""), inf, -inf});
  EXPECT_EQ(dump_of(t), R"({"dimensions":"3","name":"out","values":["nan","inf","-inf"]})");
  const Tensor d =
      Tensor::from_vector<double>({2}, {-std::numeric_limits<double>::infinity(), 0.1});
  EXPECT_EQ(dump_of(d), R"({"dimensions":"2","name":"out","values":["-inf",0.1]})");
}

TEST(TensorJson, WritesEveryDType) {
  EXPECT_EQ(dump_of(Tensor::from_vector<bool>({2}, {true, false})),
            R"({"dimensions":"2","name":"out","values":[true,false]})");
  EXPECT_EQ(dump_of(Tensor::from_vector<int8_t>({2}, {-128, 127})),
            R"({"dimensions":"2","name":"out","values":[-128,127]})");
  EXPECT_EQ(dump_of(Tensor::from_vector<uint64_t>({1}, {std::numeric_limits<uint64_t>::max()})),
            R"({"dimensions":"1","name":"out","values":[18446744073709551615]})");
  EXPECT_EQ(dump_of(Tensor::from_vector<int64_t>({1}, {std::numeric_limits<int64_t>::min()})),
            R"({"dimensions":"1","name":"out","values":[-9223372036854775808]})");
  // float16 0.1 is 0.0999755859375; the shortest float32 text of that value is 0.099975586.
  EXPECT_EQ(dump_of(Tensor::from_vector<Half>({1, 1}, {Half(0.1f)})),
            R"({"dimensions":"1x1","name":"out","values":[0.099975586]})");
  Tensor bf16(DType::kBF16, {1});
  *static_cast<uint16_t*>(bf16.raw_data()) = 0xc040;  // -3.0
  EXPECT_EQ(dump_of(bf16), R"({"dimensions":"1","name":"out","values":[-3.0]})");
  EXPECT_EQ(dump_of(Tensor::from_vector<double>({1}, {0.1})),
            R"({"dimensions":"1","name":"out","values":[0.1]})");
}

TEST(TensorJson, ScalarAndEmptyTensors) {
  EXPECT_EQ(dump_of(Tensor::scalar<int32_t>(5)), R"({"dimensions":"","name":"out","values":[5]})");
  EXPECT_EQ(dump_of(Tensor(DType::kF32, {2, 0})),
            R"({"dimensions":"2x0","name":"out","values":[]})");
}

TEST(TensorJson, Float32ValuesRoundTrip) {
  // A spread of bit patterns over the whole float range, subnormals included.
  std::vector<float> values;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 0x10003) {
    float f;
    const auto b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, sizeof f);
    if (std::isfinite(f)) values.push_back(f);
  }
  values.push_back(std::numeric_limits<float>::denorm_min());
  values.push_back(std::numeric_limits<float>::max());
  values.push_back(-std::numeric_limits<float>::min());
  const Tensor t = Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  Result<json> j = tensor_to_json(t, "x");
  ASSERT_TRUE(j.is_ok());
  const json back = json::parse(j->dump());
  ASSERT_EQ(back["values"].size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto f = static_cast<float>(back["values"][i].get<double>());
    ASSERT_EQ(std::memcmp(&f, &values[i], sizeof f), 0) << values[i];
  }
}

TEST(TensorJson, OutputsArray) {
  const std::vector<std::string> names = {"a", "b"};
  const std::vector<Tensor> tensors = {Tensor::scalar<float>(1.5f),
                                       Tensor::from_vector<int32_t>({1, 2}, {7, 8})};
  Result<json> j = outputs_to_json(names, tensors);
  ASSERT_TRUE(j.is_ok());
  EXPECT_EQ(j->dump(), R"([{"dimensions":"","name":"a","values":[1.5]},)"
                       R"({"dimensions":"1x2","name":"b","values":[7,8]}])");
  EXPECT_EQ(outputs_to_json(names, std::span(tensors).first(1)).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(TensorJson, RejectsTensorsWithoutNumbers) {
  Result<json> j = tensor_to_json(Tensor(DType::kString, {1}), "names");
  EXPECT_EQ(j.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(j.status().message().find("names"), std::string::npos);
}

TEST(TensorJson, InvalidUtf8NamesStillDump) {
  Result<json> j = tensor_to_json(Tensor::scalar<uint8_t>(1), "bad\xff name");
  ASSERT_TRUE(j.is_ok());
  EXPECT_EQ(j->dump(), "{\"dimensions\":\"\",\"name\":\"bad\xef\xbf\xbd name\",\"values\":[1]}");
}

TEST(TensorJson, WritesAFile) {
  testing::ScratchDir dir;
  const std::vector<std::string> names = {"y"};
  const std::vector<Tensor> tensors = {Tensor::from_vector<float>({2}, {0.5f, -1.0f})};
  ASSERT_TRUE(write_outputs_json(dir / "out.json", names, tensors).is_ok());
  const json back = json::parse(testing::read_bytes(dir / "out.json"));
  EXPECT_EQ(back, json::parse(R"([{"name": "y", "dimensions": "2", "values": [0.5, -1.0]}])"));
  EXPECT_EQ(write_outputs_json(dir / "no" / "out.json", names, tensors).code(),
            StatusCode::kIoError);
}

}  // namespace
}  // namespace kiln::io
