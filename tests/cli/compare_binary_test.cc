// `kiln compare` through the real binary: a small model (random inputs, --all-layers, tolerance
// failures, errors) and the committed digits model with its held-out labels.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "io/npy.h"
#include "json_schema.h"
#include "kiln_process.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace compare_binary_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::OnnxBuilder;
constexpr int kCompareFloat = onnx::TensorProto::FLOAT;

// x[batch,3,8,8] -> Conv(3->4, 3x3, pad 1) -> Relu -> GlobalAveragePool -> Flatten -> y[batch,4].
// `phase` changes the weights only, so two models with different phases have the same interface.
std::string write_small_model(const fs::path& dir, const std::string& file, float phase,
                              const std::string& input = "x") {
  OnnxBuilder b;
  b.input(input, kCompareFloat, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
  std::vector<float> w(4 * 3 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * std::sin(static_cast<float>(i) + phase);
  b.initializer("w", {4, 3, 3, 3}, w);
  auto& conv = b.node("Conv", {input, "w"}, {"c"}, "conv");
  testing::set_attr_ints(conv, "pads", {1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("GlobalAveragePool", {"r"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"y"}, "flatten");
  return b.write(dir, file).string();
}

json read_compare_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class KilnCompare : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = write_small_model(dir_.path(), "m.onnx", 0);
    other_ = write_small_model(dir_.path(), "other.onnx", 1.5f);
    engine_ = build(model_, "m.plan",
                    "--minShapes=x:1x3x8x8 --optShapes=x:4x3x8x8 "
                    "--maxShapes=x:8x3x8x8");
  }
  std::string build(const std::string& onnx, const std::string& plan, const std::string& shapes) {
    const std::string path = (dir_.path() / plan).string();
    const auto r =
        testing::run_kiln("build --onnx=" + onnx + " " + shapes + " --saveEngine=" + path);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return path;
  }
  std::string path(const std::string& f) const { return (dir_.path() / f).string(); }

  testing::TempDir dir_;
  std::string model_, other_, engine_;
};

TEST_F(KilnCompare, RandomInputsAllLayersPassAndListLayers) {
  const auto r = testing::run_kiln("compare --onnx=" + model_ + " --engines=" + engine_ +
                                   " --samples=6 --batch=4 --all-layers --atol=1e-4 --rtol=1e-3 "
                                   "--cosine=0.9999 --top1=0 --json=" +
                                   path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "6 samples")) << r.out;
  EXPECT_TRUE(contains(r.out, "largest added error first")) << r.out;
  EXPECT_TRUE(contains(r.out, "[I] PASSED")) << r.out;
  const json j = read_compare_json(path("c.json"));
  EXPECT_EQ(j["samples"], 6);
  EXPECT_EQ(j["passed"], true);
  const json& e = j["engines"][0];
  EXPECT_EQ(e["outputs"][0]["name"], "y");
  EXPECT_EQ(e["outputs"][0]["elements"], 24);
  EXPECT_GE(e["outputs"][0]["cosine"].get<double>(), 0.9999);
  EXPECT_EQ(e["outputs"][0]["top1_agreement_percent"], 100.0);
  ASSERT_GE(e["layers_ranked"].size(), 1u);  // the fused conv+relu, pool, output
  bool has_y = false;
  for (const json& l : e["layers_ranked"]) has_y |= l["tensor"] == "y";
  EXPECT_TRUE(has_y) << e.dump();
  // The accuracy object has the exec summary's shape, so kiln report can read it.
  std::ifstream schema_file(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const json schema = json::parse(schema_file)["definitions"]["accuracy"];
  EXPECT_EQ(testing::check_schema(e["accuracy"], schema), std::vector<std::string>{});
  EXPECT_FALSE(e["accuracy"]["layers"].empty());
}

// A Split, an Add and a Concat between convolutions run on blocked tensors (nchw16c_layout keeps
// them there): --all-layers still compares their outputs, unblocked, with the reference's.
TEST_F(KilnCompare, AllLayersComparesSplitAddAndConcatOnBlockedTensors) {
  OnnxBuilder b;
  b.input("x", kCompareFloat, {1, 16, 6, 6}).output("y");
  const auto weights = [&](const std::string& name, int64_t out, int64_t in) {
    std::vector<float> w(static_cast<size_t>(out * in));
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.2f * std::sin(0.7f * static_cast<float>(i));
    b.initializer(name, {out, in, 1, 1}, w);
  };
  weights("w1", 32, 16);
  weights("w2", 16, 16);
  weights("w3", 16, 48);
  b.node("Conv", {"x", "w1"}, {"a"}, "conv1");
  b.initializer_i64("sizes", {2}, {16, 16});
  testing::set_attr_int(b.node("Split", {"a", "sizes"}, {"s0", "s1"}, "split"), "axis", 1);
  b.node("Conv", {"s1", "w2"}, {"c"}, "conv2");
  b.node("Add", {"c", "s0"}, {"d"}, "add");
  testing::set_attr_int(b.node("Concat", {"d", "s1", "c"}, {"k"}, "concat"), "axis", 1);
  b.node("Conv", {"k", "w3"}, {"y"}, "conv3");
  const std::string onnx = b.write(dir_.path(), "split.onnx").string();
  const std::string plan = build(onnx, "split.plan", "");
  const auto r = testing::run_kiln("compare --onnx=" + onnx + " --engines=" + plan +
                                   " --samples=2 --all-layers --json=" + path("s.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = read_compare_json(path("s.json"));
  std::set<std::string> compared;
  for (const json& l : j["engines"][0]["layers_ranked"]) compared.insert(l["tensor"]);
  for (const char* t : {"s0", "s1", "d", "k"}) EXPECT_TRUE(compared.count(t)) << t << "\n" << r.out;
}

TEST_F(KilnCompare, ToleranceFailuresExitTwoNamingEngineOutputMetricAndBound) {
  // An engine of the same interface but other weights: far from the reference.
  const std::string wrong = build(other_, "other.plan", "--shapes=x:4x3x8x8");
  const auto r = testing::run_kiln("compare --onnx=" + model_ + " --engines=" + engine_ + "," +
                                   wrong + " --samples=4 --atol=1e-5 --cosine=0.999 --top1=0.5");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL engine '" + wrong + "' output 'y': allclose")) << r.out;
  EXPECT_TRUE(contains(r.out, "FAIL engine '" + wrong + "' output 'y': cosine")) << r.out;
  EXPECT_TRUE(contains(r.out, "< 0.999 (--cosine)")) << r.out;
  EXPECT_FALSE(contains(r.out, "FAIL engine '" + engine_ + "'")) << r.out;
  EXPECT_TRUE(contains(r.out, "tolerance check")) << r.out;
}

TEST_F(KilnCompare, NpyDataAndLabels) {
  Tensor x(DType::kF32, {5, 3, 8, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(0.37f * i);
  ASSERT_TRUE(io::write_npy(path("x.npy"), x).is_ok());
  Tensor labels(DType::kI64, {5});
  for (int64_t i = 0; i < 5; ++i) labels.data<int64_t>()[i] = i % 4;
  ASSERT_TRUE(io::write_npy(path("labels.npy"), labels).is_ok());
  const auto r = testing::run_kiln("compare --onnx=" + model_ + " --engines=" + engine_ +
                                   " --data=" + path("x.npy") + " --labels=" + path("labels.npy") +
                                   " --top1=0 --json=" + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "labels: reference top-1")) << r.out;
  const json j = read_compare_json(path("c.json"));
  const json& a = j["engines"][0]["accuracy"];
  EXPECT_EQ(a["metric"], "top1_percent");
  EXPECT_EQ(a["samples"], 5);
  EXPECT_EQ(a["value"], a["reference_value"]);
  EXPECT_EQ(a["delta"], 0.0);
}

// A folder of images is preprocessed by kiln calibrate's flags: the model's scores are the mean of
// each channel of a solid (200, 125, 50) image: class 0 wins with ImageNet's defaults, class 2 with
// --channelOrder=BGR, class 0 again when --std (given R,G,B) shrinks blue, class 1 when --mean
// lowers red.
TEST_F(KilnCompare, ImageFolderFollowsThePreprocessingFlags) {
  OnnxBuilder b;
  b.input("x", kCompareFloat, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
  b.node("GlobalAveragePool", {"x"}, {"p"}, "pool");
  b.node("Flatten", {"p"}, {"y"}, "flatten");
  const std::string model = b.write(dir_.path(), "means.onnx").string();
  const std::string plan = build(model, "means.plan", "--shapes=x:1x3x8x8");
  fs::create_directories(dir_.path() / "images");
  std::vector<unsigned char> px(8 * 8 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>(200 - 75 * (i % 3));
  ASSERT_NE(stbi_write_png(path("images/a.png").c_str(), 8, 8, 3, px.data(), 8 * 3), 0);
  Tensor labels(DType::kI64, {1});
  labels.data<int64_t>()[0] = 0;
  ASSERT_TRUE(io::write_npy(path("labels.npy"), labels).is_ok());
  const std::string base = "compare --onnx=" + model + " --engines=" + plan +
                           " --data=" + path("images") + " --labels=" + path("labels.npy") +
                           " --json=" + path("c.json");
  for (const auto& [flags, top1] : {std::pair<std::string, double>{"", 100.0},
                                    {" --channelOrder=BGR", 0.0},
                                    {" --channelOrder=BGR --mean=0,0,0 --std=1,1,0.01", 100.0},
                                    {" --mean=0.9,0,0 --std=1,1,1", 0.0}}) {
    const auto r = testing::run_kiln(base + flags);
    ASSERT_EQ(r.exit_code, 0) << flags << "\n" << r.out;
    EXPECT_EQ(read_compare_json(path("c.json"))["engines"][0]["accuracy"]["value"], top1) << flags;
  }
  const auto bad = testing::run_kiln(base + " --std=1,0,1");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_TRUE(contains(bad.out, "--std has a zero")) << bad.out;
}

// INT8 engines chain uint8 tensors named "<tensor>_u8": --all-layers pairs them with the float
// tensor they stand for and compares them dequantized (the scale of the layer that wrote them).
TEST_F(KilnCompare, Int8EngineUint8TensorsAreDequantizedAndRanked) {
  const std::string int8 = build(model_, "int8.plan",
                                 "--minShapes=x:1x3x8x8 --optShapes=x:4x3x8x8 "
                                 "--maxShapes=x:8x3x8x8 --int8");
  const auto r = testing::run_kiln("compare --onnx=" + model_ + " --engines=" + int8 +
                                   " --samples=4 --all-layers --json=" + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = read_compare_json(path("c.json"));
  bool input_ranked = false;
  for (const json& l : j["engines"][0]["layers_ranked"]) {
    // x is uniform in [-1, 1): the placeholder range +-2 quantizes it to steps of 2/127.
    input_ranked |= l["tensor"] == "x" && l["rel_err"].get<double>() < 0.05;
  }
  EXPECT_TRUE(input_ranked) << j["engines"][0].dump(1);
  for (const json& l : j["engines"][0]["layers_not_comparable"]) {
    EXPECT_NE(l["reason"], "not comparable (uint8)") << l.dump();
  }
  EXPECT_EQ(j["engines"][0]["outputs"][0]["name"], "y");
}

// Per sample cosines name the input an engine gets wrong: an INT8 engine with the placeholder
// range +-2 clips only sample 1, whose channel 0 runs to +-10.
TEST_F(KilnCompare, PerSampleCosinesFindTheWorstSample) {
  const std::string int8 = build(model_, "int8.plan", "--shapes=x:1x3x8x8 --int8");
  Tensor x(DType::kF32, {3, 3, 8, 8});
  float* v = x.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bool loud = i / (3 * 64) == 1 && i % (3 * 64) < 64;
    v[i] = std::sin(0.61f * static_cast<float>(i)) * (loud ? 10.0f : 1.0f);
  }
  ASSERT_TRUE(io::write_npy(path("x3.npy"), x).is_ok());
  const auto r =
      testing::run_kiln("compare --onnx=" + model_ + " --engines=" + engine_ + "," + int8 +
                        " --data=" + path("x3.npy") + " --batch=1 --json=" + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "int8.plan 'y': per sample cosine min")) << r.out;
  const json j = read_compare_json(path("c.json"));
  const json& fp32 = j["engines"][0]["outputs"][0]["sample_cosine"];
  const json& q = j["engines"][1]["outputs"][0]["sample_cosine"];
  ASSERT_EQ(fp32["values"].size(), 3u);
  ASSERT_EQ(q["values"].size(), 3u);
  EXPECT_GT(fp32["min"].get<double>(), 0.99999);
  EXPECT_EQ(q["min_sample"], 1) << q.dump();
  EXPECT_EQ(q["min"], q["values"][1]);
  EXPECT_LT(q["min"].get<double>(), q["median"].get<double>() - 1e-3) << q.dump();
  EXPECT_EQ(q["median"], std::min(q["values"][0].get<double>(), q["values"][2].get<double>()));
}

// Blocked engines (nchw16c_layout) keep "<tensor>.nchw16c" tensors between 1x1 and depthwise
// layers: --all-layers compares them with the reference's NCHW tensor, reordered and without the
// padding channels.
TEST_F(KilnCompare, BlockedTensorsAreComparedInNchw) {
  OnnxBuilder b;
  b.input("x", kCompareFloat, {2, 20, 6, 6}).output("y");
  std::vector<float> wd(20 * 9), w1(24 * 20), w2(24 * 24);
  for (size_t i = 0; i < wd.size(); ++i) wd[i] = 0.3f * std::sin(static_cast<float>(i));
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.2f * std::cos(static_cast<float>(i));
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.2f * std::sin(0.5f * static_cast<float>(i));
  b.initializer("wd", {20, 1, 3, 3}, wd).initializer("w1", {24, 20, 1, 1}, w1);
  b.initializer("w2", {24, 24, 1, 1}, w2);
  auto& dw = b.node("Conv", {"x", "wd"}, {"d"}, "dw");
  testing::set_attr_ints(dw, "pads", {1, 1, 1, 1});
  testing::set_attr_int(dw, "group", 20);
  b.node("Relu", {"d"}, {"r"}, "relu");
  b.node("Conv", {"r", "w1"}, {"p1"}, "pw1");
  b.node("Conv", {"p1", "w2"}, {"p2"}, "pw2");
  b.node("GlobalAveragePool", {"p2"}, {"g"}, "pool");
  b.node("Flatten", {"g"}, {"y"}, "flatten");
  const std::string onnx = b.write(dir_.path(), "blocked.onnx").string();
  const std::string plan = build(onnx, "blocked.plan", "");
  const auto inspect = testing::run_kiln("inspect " + plan);
  if (!contains(inspect.out, "ConvNchw16c")) GTEST_SKIP() << "no blocked kernels on this host";
  const auto r = testing::run_kiln("compare --onnx=" + onnx + " --engines=" + plan +
                                   " --samples=2 --all-layers --json=" + path("c.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = read_compare_json(path("c.json"));
  std::set<std::string> ranked;
  for (const json& l : j["engines"][0]["layers_ranked"]) {
    if (l["rel_err"].get<double>() < 1e-5) ranked.insert(l["tensor"].get<std::string>());
  }
  for (const char* t : {"r", "p1", "p2"}) EXPECT_TRUE(ranked.count(t)) << t << r.out;
  // Each tensor once, at the layer that made it: the reorders add nothing to rank.
  for (const json& l : j["engines"][0]["layers_ranked"]) {
    EXPECT_EQ(l["layer"].get<std::string>().find("nchw16c"), std::string::npos) << l.dump();
  }
  EXPECT_TRUE(j["engines"][0]["layers_not_comparable"].empty())
      << j["engines"][0]["layers_not_comparable"].dump(1);
}

TEST_F(KilnCompare, DefaultBatchIsTheLargestEveryEngineAdmits) {
  const std::string one = build(model_, "one.plan", "--shapes=x:1x3x8x8");
  const auto r = testing::run_kiln("compare --onnx=" + model_ + " --engines=" + engine_ + "," +
                                   one + " --samples=3 --cosine=0.9999");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "3 samples; 'x' random 3x3x8x8 (seed 0); batch 1")) << r.out;
}

TEST_F(KilnCompare, LoadInputsFeedsNamedInputsAndDrawsTheOthers) {
  // a[batch,4] + b[batch,4] -> s
  OnnxBuilder b;
  b.input("a", kCompareFloat, {-1, 4}, {"batch", ""})
      .input("b", kCompareFloat, {-1, 4}, {"batch", ""})
      .output("s");
  b.node("Add", {"a", "b"}, {"s"}, "add");
  const std::string two = b.write(dir_.path(), "two.onnx").string();
  const std::string plan = build(two, "two.plan", "--shapes=a:3x4,b:3x4");
  Tensor a(DType::kF32, {3, 4});
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>(i);
  ASSERT_TRUE(io::write_npy(path("a.npy"), a).is_ok());
  const auto r = testing::run_kiln("compare --onnx=" + two + " --engines=" + plan +
                                   " --loadInputs=a:" + path("a.npy") + " --atol=0 --rtol=0");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "3 samples; 'a' from " + path("a.npy") + ", 'b' random 3x4"))
      << r.out;
  const auto wrong = testing::run_kiln("compare --onnx=" + two + " --engines=" + plan +
                                       " --loadInputs=c:" + path("a.npy"));
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out;
  EXPECT_TRUE(contains(wrong.out, "the model has no input 'c'")) << wrong.out;
  const auto data = testing::run_kiln("compare --onnx=" + two + " --engines=" + plan +
                                      " --data=" + path("a.npy"));
  EXPECT_EQ(data.exit_code, 1) << data.out;
  EXPECT_TRUE(contains(data.out, "--data feeds models with one input")) << data.out;
}

TEST_F(KilnCompare, ErrorsNameTheProblem) {
  struct Case {
    std::string args, message;
  };
  const std::string other_input = write_small_model(dir_.path(), "z.onnx", 0, "z");
  const std::string z_engine = build(other_input, "z.plan", "--shapes=z:1x3x8x8");
  const std::string static_engine = build(model_, "static.plan", "--shapes=x:1x3x8x8");
  Tensor bad(DType::kF32, {2, 3, 4, 4});
  ASSERT_TRUE(io::write_npy(path("bad.npy"), bad).is_ok());
  const std::string base = "compare --onnx=" + model_ + " --engines=";
  const std::vector<Case> cases{
      {base + path("missing.plan"), "missing.plan' does not exist"},
      {base + z_engine, "was not built from"},
      {base + engine_ + " --data=" + path("bad.npy"), "bad.npy' holds float32 2x3x4x4"},
      {base + engine_ + " --data=" + path("none.npy"), "none.npy"},
      {base + engine_ + " --cosine=2", "--cosine must be in [0, 1]"},
      {base + engine_ + " --atol=abc", "--atol"},
      {base + engine_ + " --rtol=-1", "--rtol must be in"},
      {base + static_engine + " --batch=4 --samples=4", static_engine},
      {base + engine_ + " --batch=16 --samples=16", "engine '" + engine_ + "'"},
      {base + engine_ + " --labels=" + path("bad.npy"), "it needs int64 [samples]"},
      {"compare --onnx=" + path("nope.onnx") + " --engines=" + engine_, "nope.onnx"},
  };
  for (const Case& c : cases) {
    const auto r = testing::run_kiln(c.args);
    EXPECT_EQ(r.exit_code, 1) << c.args << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, c.message)) << c.args << "\nwanted: " << c.message << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "Internal")) << r.out;
  }
}

// The committed digits model (models/digits): the FP32 engine's held-out top-1 equals the
// reference executor's and its logits are the reference's up to float rounding.
TEST(KilnCompareDigits, Fp32EngineKeepsTheReferenceTop1) {
  testing::TempDir dir;
  const std::string digits = std::string(KILN_SOURCE_DIR) + "/models/digits/";
  const std::string plan = (dir.path() / "digits.plan").string();
  auto r = testing::run_kiln("build --onnx=" + digits +
                             "digits.onnx --minShapes=input:1x1x16x16 "
                             "--optShapes=input:64x1x16x16 --maxShapes=input:64x1x16x16 "
                             "--saveEngine=" +
                             plan);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path runs = dir.path() / "runs";
  fs::create_directories(runs);
  const std::string summary = (runs / "fp32.json").string();
  r = testing::run_kiln("exec --loadEngine=" + plan +
                        " --shapes=input:64x1x16x16 --iterations=2 "
                        "--warmUp=0 --duration=0 --exportSummary=" +
                        summary);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string out = (dir.path() / "c.json").string();
  r = testing::run_kiln("compare --onnx=" + digits + "digits.onnx --engines=" + plan +
                        " --data=" + digits + "test_x.npy --labels=" + digits +
                        "test_y.npy --batch=64 --cosine=0.9999 --top1=0 --json=" + out +
                        " --summaries=" + summary);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // The summary now carries the accuracy, valid against the summary schema and read by kiln report.
  std::ifstream schema_file(std::string(KILN_SOURCE_DIR) + "/docs/exec_summary.schema.json");
  const json s = read_compare_json(summary);
  EXPECT_EQ(testing::check_schema(s, json::parse(schema_file)), std::vector<std::string>{});
  EXPECT_EQ(s["accuracy"]["metric"], "top1_percent");
  r = testing::run_kiln("report " + runs.string() + " -o " + (dir.path() / "r.md").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(testing::read_text(dir.path() / "r.md"), "top1_percent"))
      << testing::read_text(dir.path() / "r.md");
  const json j = read_compare_json(out);
  EXPECT_EQ(j["samples"], 450);
  const json& a = j["engines"][0]["accuracy"];
  EXPECT_EQ(a["value"], a["reference_value"]) << r.out;
  EXPECT_GE(j["engines"][0]["outputs"][0]["cosine"].get<double>(), 0.9999);
  EXPECT_NEAR(j["labels"]["reference_top1_percent"].get<double>(), 100.0 * 447 / 450, 1e-9);
}

}  // namespace compare_binary_test
}  // namespace kiln
