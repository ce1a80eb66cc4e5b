// Import of well-formed models and a clean, named error for each kind of bad model.
#include "frontend/onnx/importer.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "runtime/reference_executor.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace {

using frontend::import_onnx_bytes;
using frontend::import_onnx_file;
using testing::OnnxBuilder;
using testing::TempDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

OnnxBuilder relu_model(int opset = 17) {
  OnnxBuilder b(opset);
  b.input("x", kFloat, {-1, 3}, {"batch", ""}).output("y");
  b.node("Relu", {"x"}, {"y"}, "relu1");
  return b;
}

void expect_error(const Status& s, StatusCode code, std::vector<std::string> fragments) {
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const auto& f : fragments) {
    EXPECT_NE(s.message().find(f), std::string::npos) << "'" << f << "' not in: " << s.message();
  }
}

TEST(Importer, KeepsSymbolicDimsAndInfersShapes) {
  auto g = import_onnx_bytes(relu_model().bytes(), ".");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const ir::Value& y = g->value(g->outputs[0]);
  EXPECT_EQ(y.desc.to_string(), "float32[batch,3]");
  EXPECT_EQ(g->nodes[0].name, "relu1");
}

TEST(Importer, NamesUnnamedNodesAndSortsTopologically) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).output("z");
  b.node("Relu", {"y"}, {"z"});  // consumer listed before producer
  b.node("Relu", {"x"}, {"y"});
  auto g = import_onnx_bytes(b.bytes(), ".");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0].name, "Relu_1");
  EXPECT_EQ(g->nodes[1].name, "Relu_0");
}

TEST(Importer, RejectsEmptyTruncatedAndNonOnnxFiles) {
  expect_error(import_onnx_bytes("", ".").status(), StatusCode::kCorrupt, {"empty"});
  expect_error(import_onnx_bytes("this is not a model", ".").status(), StatusCode::kCorrupt,
               {"not a valid ONNX model"});
  const std::string full = relu_model().bytes();
  for (size_t n = 1; n < full.size(); ++n) {
    auto g = import_onnx_bytes(std::string_view(full).substr(0, n), ".");
    EXPECT_FALSE(g.is_ok()) << "prefix of " << n << " bytes imported";
  }
}

TEST(Importer, MissingFileIsNotFound) {
  expect_error(import_onnx_file("/nonexistent/m.onnx").status(), StatusCode::kNotFound,
               {"/nonexistent/m.onnx"});
}

// A regular file is read in one piece of its size; a pipe, which has none, is streamed.
TEST(Importer, ReadsModelsFromFilesAndPipes) {
  TempDir dir;
  const std::string bytes = relu_model().bytes();
  const auto file = dir.path() / "m.onnx";
  std::ofstream(file, std::ios::binary) << bytes;
  auto g = import_onnx_file(file);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g->nodes[0].name, "relu1");

  const auto fifo = dir.path() / "pipe.onnx";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << bytes; });
  auto p = import_onnx_file(fifo);
  writer.join();
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_EQ(p->nodes[0].name, "relu1");
}

TEST(Importer, ListsEveryUnsupportedOpWithNodeNames) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).output("z");
  b.node("FancyOp", {"x"}, {"y"}, "first");
  b.node("OtherOp", {"y"}, {"z"}, "second");
  expect_error(import_onnx_bytes(b.bytes(), ".").status(), StatusCode::kUnsupported,
               {"FancyOp", "OtherOp", "'first'", "'second'"});
}

TEST(Importer, RefusesNewerOpset) {
  expect_error(import_onnx_bytes(relu_model(22).bytes(), ".").status(), StatusCode::kUnsupported,
               {"opset 22", "21"});
}

TEST(Importer, RejectsNegativeDeclaredDim) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).output("y");
  b.model()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(-4);
  b.node("Relu", {"x"}, {"y"});
  expect_error(import_onnx_bytes(b.bytes(), ".").status(), StatusCode::kInvalidModel,
               {"'x'", "negative", "-4"});
}

TEST(Importer, RejectsOverflowingInitializer) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).output("y");
  auto* t = b.model().mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int i = 0; i < 4; ++i) t->add_dims(int64_t{1} << 20);
  b.node("Relu", {"x"}, {"y"});
  expect_error(import_onnx_bytes(b.bytes(), ".").status(), StatusCode::kInvalidModel,
               {"initializer 'w'", "overflows"});
}

TEST(Importer, RejectsDanglingInputAndCycles) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).output("y");
  b.node("Relu", {"nowhere"}, {"y"}, "r");
  expect_error(import_onnx_bytes(b.bytes(), ".").status(), StatusCode::kInvalidModel,
               {"'r'", "'nowhere'"});
  OnnxBuilder c;
  c.input("x", kFloat, {2}).output("b");
  c.node("Add", {"x", "b"}, {"a"}, "n1");
  c.node("Relu", {"a"}, {"b"}, "n2");
  expect_error(import_onnx_bytes(c.bytes(), ".").status(), StatusCode::kInvalidModel, {"cycle"});
}

TEST(Importer, RejectsAttributeOfWrongType) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3}).output("y");
  auto& n = b.node("Softmax", {"x"}, {"y"}, "sm");
  auto* a = n.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(1.0f);
  expect_error(import_onnx_bytes(b.bytes(), ".").status(), StatusCode::kInvalidModel,
               {"'sm'", "axis", "int"});
}

// An input that also has an initializer is a default the caller may override (IR >= 4).
TEST(Importer, InitializerBackedInputIsAnOverridableDefault) {
  OnnxBuilder b;
  b.input("x", kFloat, {2}).input("bias", kFloat, {2}).output("y");
  b.initializer("bias", {2}, {10.f, 20.f});
  b.node("Add", {"x", "bias"}, {"y"});
  auto g = import_onnx_bytes(b.bytes(), ".");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  auto exec = runtime::ReferenceExecutor::create(*g);
  ASSERT_TRUE(exec.is_ok());
  runtime::NamedTensors feeds{{"x", Tensor::from_vector<float>({2}, {1.f, 2.f})}};
  auto out = exec->run(feeds);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<float>()[1], 22.f);
  feeds["bias"] = Tensor::from_vector<float>({2}, {0.f, 0.f});
  out = exec->run(feeds);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].data<float>()[1], 2.f);
}

class ExternalData : public ::testing::Test {
 protected:
  // Model with initializer "bias" stored externally at `location`.
  OnnxBuilder model_with_external(const std::string& location, int64_t offset = 0) {
    OnnxBuilder b;
    b.input("x", kFloat, {2}).output("y");
    auto* t = b.model().mutable_graph()->add_initializer();
    t->set_name("bias");
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(2);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = t->add_external_data();
    kv->set_key("location");
    kv->set_value(location);
    kv = t->add_external_data();
    kv->set_key("offset");
    kv->set_value(std::to_string(offset));
    b.node("Add", {"x", "bias"}, {"y"});
    return b;
  }
  void write_weights(const std::filesystem::path& p) {
    const float w[3] = {0.f, 5.f, 7.f};
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(w), sizeof w);
  }
  TempDir dir_;
};

TEST_F(ExternalData, LoadsFromTheModelFolderWithOffset) {
  write_weights(dir_.path() / "weights.bin");
  auto path = model_with_external("weights.bin", 4).write(dir_.path());
  auto g = import_onnx_file(path);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  const Tensor& bias = *g->value(g->find_value("bias")).initializer;
  EXPECT_EQ(bias.data<float>()[0], 5.f);
  EXPECT_EQ(bias.data<float>()[1], 7.f);
}

TEST_F(ExternalData, RefusesPathsOutsideTheModelFolder) {
  std::filesystem::create_directories(dir_.path() / "m");
  write_weights(dir_.path() / "outside.bin");
  for (const std::string loc : {"../outside.bin", "/etc/passwd", "sub/../../outside.bin"}) {
    auto path = model_with_external(loc).write(dir_.path() / "m");
    auto g = import_onnx_file(path);
    expect_error(g.status(), StatusCode::kInvalidModel, {"initializer 'bias'", loc});
  }
  std::filesystem::create_symlink(dir_.path() / "outside.bin", dir_.path() / "m" / "link.bin");
  auto g = import_onnx_file(model_with_external("link.bin").write(dir_.path() / "m"));
  expect_error(g.status(), StatusCode::kInvalidModel, {"leaves the model's folder"});
}

TEST_F(ExternalData, ReportsShortFile) {
  write_weights(dir_.path() / "weights.bin");
  auto g = import_onnx_file(model_with_external("weights.bin", 8).write(dir_.path()));
  expect_error(g.status(), StatusCode::kCorrupt, {"weights.bin", "offset 8"});
}

TEST(InputCheck, NamesWrongShapeDtypeAndUnknownInput) {
  auto g = import_onnx_bytes(relu_model().bytes(), ".");
  ASSERT_TRUE(g.is_ok());
  auto exec = runtime::ReferenceExecutor::create(*g);
  ASSERT_TRUE(exec.is_ok());
  expect_error(exec->run({{"x", Tensor(DType::kF32, {2, 4})}}).status(),
               StatusCode::kInvalidArgument, {"'x'", "float32[batch,3]", "2x4"});
  expect_error(exec->run({{"x", Tensor(DType::kI64, {2, 3})}}).status(),
               StatusCode::kInvalidArgument, {"'x'", "int64", "float32"});
  expect_error(
      exec->run({{"x", Tensor(DType::kF32, {2, 3})}, {"z", Tensor(DType::kF32, {1})}}).status(),
      StatusCode::kInvalidArgument, {"unknown input 'z'", "x"});
  expect_error(exec->run({}).status(), StatusCode::kInvalidArgument, {"missing input 'x'"});
  EXPECT_TRUE(exec->run({{"x", Tensor(DType::kF32, {5, 3})}}).is_ok());
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Random byte corruption of a valid model never crashes the importer: it either imports or fails
// with a Status. (Run under ASan+UBSan in CI, which turns memory errors into failures.)
TEST(Importer, SurvivesRandomCorruption) {
  testing::OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 2, 4, 4}).output("y");
  b.initializer("w", {3, 2, 3, 3}, std::vector<float>(54, 0.5f));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"}, "conv");
  testing::set_attr_ints(conv, "pads", {1, 1, 1, 1});
  const std::string good = b.bytes();
  uint64_t state = 42;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  };
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) bad[next() % bad.size()] = static_cast<char>(next() & 0xff);
    auto g = frontend::import_onnx_bytes(bad, ".");
    if (g.is_ok()) {
      // Whatever imported must also run or fail cleanly.
      auto exec = runtime::ReferenceExecutor::create(*g);
      if (exec.is_ok()) (void)exec->run({});
    }
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// A shape that only becomes huge inside the graph is refused before anything is allocated: at
// import when the shape is a constant, at run time when it is an input.
TEST(Executor, RefusesHugeIntermediateShapeNamingTheNode) {
  const std::vector<int64_t> huge = {1000000, 1000000, 1000};
  testing::OnnxBuilder constant;
  constant.input("x", onnx::TensorProto::FLOAT, {1}).output("y");
  auto* shape = constant.model().mutable_graph()->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(3);
  for (int64_t d : huge) shape->add_int64_data(d);
  constant.node("Expand", {"x", "shape"}, {"y"}, "blow_up");
  expect_error(frontend::import_onnx_bytes(constant.bytes(), ".").status(),
               StatusCode::kInvalidModel, {"node 'blow_up' (Expand)", "GiB"});

  testing::OnnxBuilder dynamic;
  dynamic.input("x", onnx::TensorProto::FLOAT, {1}).input("shape", onnx::TensorProto::INT64, {3});
  dynamic.output("y");
  dynamic.node("Expand", {"x", "shape"}, {"y"}, "blow_up");
  auto g = frontend::import_onnx_bytes(dynamic.bytes(), ".");
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  auto exec = runtime::ReferenceExecutor::create(*g);
  ASSERT_TRUE(exec.is_ok());
  auto out = exec->run(
      {{"x", Tensor(DType::kF32, {1})}, {"shape", Tensor::from_vector<int64_t>({3}, huge)}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_NE(out.status().message().find("node 'blow_up' (Expand)"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace kiln
