#pragma once
// Builds small ONNX models in tests with ONNX's own protobuf classes.

#include <filesystem>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace kiln::testing {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int opset = 17, int ir_version = 8);

  // dims: >= 0 known, -1 unknown; symbols in `names` (same length) override: {"batch", "", ""}.
  OnnxBuilder& input(const std::string& name, int elem_type, std::vector<int64_t> dims,
                     std::vector<std::string> symbols = {});
  OnnxBuilder& output(const std::string& name, int elem_type = 0, std::vector<int64_t> dims = {});
  OnnxBuilder& initializer(const std::string& name, std::vector<int64_t> dims,
                           std::vector<float> values);
  OnnxBuilder& initializer_i64(const std::string& name, std::vector<int64_t> dims,
                               std::vector<int64_t> values);
  onnx::NodeProto& node(const std::string& op_type, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "");

  onnx::ModelProto& model() { return model_; }
  std::string bytes() const;
  // Writes model.onnx into `dir` and returns its path.
  std::filesystem::path write(const std::filesystem::path& dir,
                              const std::string& file = "model.onnx") const;

 private:
  onnx::ModelProto model_;
};

// x[x_dims] -> Conv(3->8, 3x3, pads 1) "conv1" -> c1 -> Relu "relu1" -> r1 -> Conv(8->4, 1x1)
// "conv2" -> y, weights w1_scale * sin(0.9 i) and w2_scale * cos(0.7 i): the INT8 CLI tests' model.
OnnxBuilder conv_relu_conv_model(std::vector<int64_t> x_dims, std::vector<std::string> x_symbols,
                                 float w1_scale, float w2_scale);

void set_attr_int(onnx::NodeProto& node, const std::string& name, int64_t v);
void set_attr_ints(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> v);
void set_attr_float(onnx::NodeProto& node, const std::string& name, float v);
void set_attr_string(onnx::NodeProto& node, const std::string& name, const std::string& v);

// A fresh empty folder under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::testing
