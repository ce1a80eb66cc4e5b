#include "testing/onnx_builder.h"

#include <cmath>
#include <fstream>
#include <random>

namespace kiln::testing {

OnnxBuilder::OnnxBuilder(int opset, int ir_version) {
  model_.set_ir_version(ir_version);
  model_.set_producer_name("kiln-tests");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

static void fill_type(onnx::ValueInfoProto* vi, int elem_type, const std::vector<int64_t>& dims,
                      const std::vector<std::string>& symbols, bool with_shape) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  if (!with_shape) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (i < symbols.size() && !symbols[i].empty()) {
      d->set_dim_param(symbols[i]);
    } else if (dims[i] >= 0) {
      d->set_dim_value(dims[i]);
    }
  }
}

OnnxBuilder& OnnxBuilder::input(const std::string& name, int elem_type, std::vector<int64_t> dims,
                                std::vector<std::string> symbols) {
  auto* vi = model_.mutable_graph()->add_input();
  vi->set_name(name);
  fill_type(vi, elem_type, dims, symbols, true);
  return *this;
}

OnnxBuilder& OnnxBuilder::output(const std::string& name, int elem_type,
                                 std::vector<int64_t> dims) {
  auto* vi = model_.mutable_graph()->add_output();
  vi->set_name(name);
  if (elem_type != 0) fill_type(vi, elem_type, dims, {}, !dims.empty());
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer(const std::string& name, std::vector<int64_t> dims,
                                      std::vector<float> values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return *this;
}

OnnxBuilder& OnnxBuilder::initializer_i64(const std::string& name, std::vector<int64_t> dims,
                                          std::vector<int64_t> values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return *this;
}

onnx::NodeProto& OnnxBuilder::node(const std::string& op_type, std::vector<std::string> inputs,
                                   std::vector<std::string> outputs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return *n;
}

std::string OnnxBuilder::bytes() const { return model_.SerializeAsString(); }

std::filesystem::path OnnxBuilder::write(const std::filesystem::path& dir,
                                         const std::string& file) const {
  const auto path = dir / file;
  std::ofstream(path, std::ios::binary) << bytes();
  return path;
}

void set_attr_int(onnx::NodeProto& node, const std::string& name, int64_t v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

OnnxBuilder conv_relu_conv_model(std::vector<int64_t> x_dims, std::vector<std::string> x_symbols,
                                 float w1_scale, float w2_scale) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, std::move(x_dims), std::move(x_symbols)).output("y");
  std::vector<float> w1(8 * 3 * 9), w2(4 * 8);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = w1_scale * std::sin(0.9f * static_cast<float>(i));
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = w2_scale * std::cos(0.7f * static_cast<float>(i));
  b.initializer("w1", {8, 3, 3, 3}, w1).initializer("w2", {4, 8, 1, 1}, w2);
  set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("Conv", {"r1", "w2"}, {"y"}, "conv2");
  return b;
}

void set_attr_ints(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_attr_float(onnx::NodeProto& node, const std::string& name, float v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void set_attr_string(onnx::NodeProto& node, const std::string& name, const std::string& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("kiln-test-" + std::to_string(rd()) + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace kiln::testing
