// INT8 engines end to end: the builder lowers convolutions and GEMMs to kiln.QConv / kiln.QGemm
// with ranges from a calibration, INT8 layers hand uint8 tensors to each other, the engine's
// outputs stay close to the float reference, and every layer says why it runs in its precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "base/cpu_features.h"
#include "engine/builder.h"
#include "engine/engine_test_util.h"
#include "engine/serialize.h"
#include "ops/infer_graph.h"
#include "passes/fold_test_util.h"
#include "passes/fusion_test_util.h"
#include "passes/pass_harness.h"
#include "quant/concat_hoist.h"
#include "quant/maxpool_hoist.h"
#include "quant/quantize_merge.h"
#include "runtime/reference_executor.h"
#include "testing/onnx_builder.h"
#include "testing/qdq_models.h"

namespace kiln {
namespace {

using testing::OnnxBuilder;

// Every float tensor's absolute max over one reference run: a minmax calibration.
quant::Calibration minmax_calibration(const OnnxBuilder& model, const runtime::NamedTensors& in) {
  const ir::Graph g = testing::import_model(model);
  auto exec = runtime::ReferenceExecutor::create(g);
  EXPECT_TRUE(exec.is_ok());
  quant::Calibration c;
  auto record = [&](const std::string& name, const Tensor& t) {
    if (t.dtype() != DType::kF32) return;
    quant::AbsHistogram h;
    h.add(t.span<float>());
    c.tensors[name] = {h.amax(), h};
  };
  for (const auto& [name, t] : in) record(name, t);
  exec->set_observer([&](const ir::Node& node, const std::vector<Tensor>& outs) {
    for (size_t i = 0; i < outs.size(); ++i) record(g.value(node.outputs[i]).name, outs[i]);
  });
  EXPECT_TRUE(exec->run(in).is_ok());
  return c;
}

using testing::cosine;
using testing::run_engine;

// The engine's one output against the reference executor's on the model: INT8 within cosine 0.999.
void expect_close_to_reference(const runtime::Engine& engine, const OnnxBuilder& b,
                               const runtime::NamedTensors& in) {
  const std::vector<Tensor> got = run_engine(engine, in);
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GT(cosine(got[0], ref[0]), 0.999);
}

std::vector<std::string> layer_ops(const engine::Plan& plan) {
  std::vector<std::string> ops;
  for (const ir::Node& n : plan.graph.nodes) {
    ops.push_back(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
  }
  return ops;
}

const ir::Node& node_named(const engine::Plan& plan, const std::string& name) {
  for (const ir::Node& n : plan.graph.nodes) {
    if (n.name == name) return n;
  }
  ADD_FAILURE() << "no layer " << name;
  return plan.graph.nodes.front();
}

size_t layer_index(const engine::Plan& plan, const std::string& name) {
  return static_cast<size_t>(&node_named(plan, name) - plan.graph.nodes.data());
}

engine::BuildOptions int8_options(std::optional<quant::Calibration> c) {
  engine::BuildOptions o;
  o.optimization_level = 0;
  o.int8 = true;
  o.calibration = std::move(c);
  return o;
}

struct SmallCnn {
  OnnxBuilder model = testing::small_cnn(false);
  runtime::NamedTensors in = {{"x", testing::random_f32({2, 3, 8, 8}, 7)}};
};

TEST(Int8Engine, LowersConvsAndGemmAndChainsUint8) {
  SmallCnn m;
  auto engine = testing::build_engine(m.model, int8_options(minmax_calibration(m.model, m.in)));
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(layer_ops(plan), (std::vector<std::string>{"QuantizeLinear", "kiln.QConv", "kiln.QConv",
                                                       "GlobalAveragePool", "Flatten",
                                                       "QuantizeLinear", "kiln.QGemm"}));
  // conv1 (+ relu) writes r1 as uint8 from 0: conv2 reads it, and adds it as a uint8 residual.
  const ir::Node& conv1 = node_named(plan, "conv1");
  EXPECT_EQ(conv1.attrs.get_int("output_type", 0), 2);
  EXPECT_EQ(conv1.attrs.get_int("y_zero_point", -1), 0);
  const ir::Node& conv2 = node_named(plan, "conv2");
  ASSERT_EQ(conv2.inputs.size(), 5u);
  EXPECT_EQ(conv2.inputs[4], conv1.outputs[0]);
  EXPECT_EQ(conv2.inputs[0], conv1.outputs[0]);
  EXPECT_EQ(conv2.attrs.get_float("z_scale", 0), conv1.attrs.get_float("y_scale", 1));
  EXPECT_EQ(conv2.attrs.get_int("output_type", 1), 1);  // the pooling reads float
  // The signed input x is centred on 128.
  EXPECT_EQ(conv1.attrs.get_int("x_zero_point", -1), 128);
  EXPECT_EQ(plan.layers[layer_index(plan, "conv1")].precision, "int8");
  EXPECT_NE(plan.layers[layer_index(plan, "conv1")].precision_note.find("writes uint8"),
            std::string::npos);
  EXPECT_EQ(plan.layers[0].precision, "fp32->uint8");
  EXPECT_EQ(plan.layers[layer_index(plan, "pool")].precision, "fp32");

  const std::vector<Tensor> ref = testing::reference_outputs(m.model, m.in);
  const std::vector<Tensor> got = run_engine(*engine, m.in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_GT(cosine(got[0], ref[0]), 0.999);
  double amax = 0, err = 0;
  for (int64_t i = 0; i < ref[0].numel(); ++i) {
    amax = std::max(amax, std::fabs(double{ref[0].data<float>()[i]}));
    err = std::max(err, std::fabs(double{got[0].data<float>()[i] - ref[0].data<float>()[i]}));
  }
  EXPECT_LT(err, 0.05 * amax);
}

// --int8WeightBits=7: the weights kiln quantizes land in [-63, 63], within vpmaddubsw's exact pair
// bound, so on AVX2 hosts the maddubs tactics apply to every conv and GEMM; the
// outputs stay close to the reference.
TEST(Int8Engine, SevenBitWeightsStayInRangeAndAdmitMaddubs) {
  SmallCnn m;
  engine::BuildOptions o = int8_options(minmax_calibration(m.model, m.in));
  o.int8_weight_bits = 7;
  auto engine = testing::build_engine(m.model, o);
  const engine::Plan& plan = engine->plan();
  const bool avx2 = (host_cpu_features() & kIsaAvx2) == kIsaAvx2;
  int int8_layers = 0;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const ir::Node& n = plan.graph.nodes[i];
    if (n.op_type != "QConv" && n.op_type != "QGemm") continue;
    ++int8_layers;
    const Tensor* w = plan.graph.value(n.inputs[1]).constant();
    ASSERT_NE(w, nullptr) << n.name;
    int amax = 0;
    for (int8_t v : w->span<int8_t>()) amax = std::max(amax, std::abs(int{v}));
    EXPECT_EQ(amax, 63) << n.name;  // each channel's largest weight maps to 63
    EXPECT_NE(plan.layers[i].precision_note.find("weights in [-63, 63]"), std::string::npos)
        << plan.layers[i].precision_note;
    if (!avx2) continue;
    const std::string maddubs =
        n.op_type == "QConv" ? "qconv.maddubs.u8s8.avx2" : "qgemm.maddubs.u8s8.avx2";
    bool applies = false;
    for (const auto& c : plan.layers[i].candidates) {
      if (c.tactic == maddubs) applies = c.note.rfind("rejected", 0) != 0;
    }
    EXPECT_TRUE(applies) << n.name << ": " << maddubs << " does not apply";
  }
  EXPECT_EQ(int8_layers, 3);
  const std::vector<Tensor> ref = testing::reference_outputs(m.model, m.in);
  const std::vector<Tensor> got = run_engine(*engine, m.in);
  EXPECT_GT(cosine(got[0], ref[0]), 0.99);
}

// conv -> relu -> MaxPool -> conv: the pooling runs on uint8 (its QuantizeLinear moves in front of
// it, and the first convolution writes uint8 for it).
TEST(Int8Engine, MaxPoolBetweenInt8LayersPoolsUint8) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 12, 12}).output("y");
  b.initializer("w1", {8, 3, 3, 3}, testing::test_wave(216, 0.3f, 0.7f))
      .initializer("w2", {4, 8, 1, 1}, testing::test_wave(32, 0.5f, 1.3f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& pool = b.node("MaxPool", {"r1"}, {"p"}, "pool");
  testing::set_attr_ints(pool, "kernel_shape", {3, 3});
  testing::set_attr_ints(pool, "strides", {2, 2});
  testing::set_attr_ints(pool, "pads", {1, 1, 1, 1});
  b.node("Conv", {"p", "w2"}, {"y"}, "conv2");
  const runtime::NamedTensors in = {{"x", testing::random_f32({2, 3, 12, 12}, 5)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(layer_ops(plan),
            (std::vector<std::string>{"QuantizeLinear", "kiln.QConv", "MaxPool", "kiln.QConv"}));
  const ir::Node& conv1 = node_named(plan, "conv1");
  EXPECT_EQ(conv1.attrs.get_int("output_type", 0), 2);
  EXPECT_EQ(plan.graph.value(node_named(plan, "pool").outputs[0]).desc.dtype, DType::kU8);
  EXPECT_EQ(plan.layers[layer_index(plan, "pool")].precision, "int8");
  // pool.max.u8 or, with AVX-512 VNNI, pool.max.u8.avx512 (whichever timed faster).
  const std::string& pool_tactic = plan.layers[layer_index(plan, "pool")].tactic;
  EXPECT_EQ(pool_tactic.rfind("pool.max.u8", 0), 0u) << pool_tactic;

  expect_close_to_reference(*engine, b, in);
}

// A stem, its max pool and eight more INT8 convolutions: on AVX-512 VNNI one channels-last chain
// (qconv_nhwc), whose max pool is labelled as the NCHW one is.
TEST(Int8Engine, AChannelsLastChainTakesItsMaxPool) {
  if ((host_cpu_features() & kIsaAvx512Vnni) != kIsaAvx512Vnni) {
    GTEST_SKIP() << "qconv_nhwc's tactics are for hosts with AVX-512 VNNI only";
  }
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1, 3, 16, 16}).output("y");
  b.initializer("w0", {16, 3, 3, 3}, testing::test_wave(432, 0.3f, 0.7f));
  testing::set_attr_ints(b.node("Conv", {"x", "w0"}, {"c0"}, "conv0"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c0"}, {"r0"}, "relu0");
  auto& pool = b.node("MaxPool", {"r0"}, {"p"}, "pool");
  testing::set_attr_ints(pool, "kernel_shape", {3, 3});
  testing::set_attr_ints(pool, "strides", {2, 2});
  testing::set_attr_ints(pool, "pads", {1, 1, 1, 1});
  std::string prev = "p";
  for (int i = 1; i <= 9; ++i) {
    const std::string n = std::to_string(i);
    b.initializer("w" + n, {16, 16, 1, 1}, testing::test_wave(256, 0.2f + 0.01f * i, 0.9f));
    const std::string out = i == 9 ? "y" : "c" + n;
    b.node("Conv", {prev, "w" + n}, {out}, "conv" + n);
    if (i < 9) b.node("Relu", {out}, {"r" + n}, "relu" + n);
    prev = "r" + n;
  }
  const runtime::NamedTensors in = {{"x", testing::random_f32({1, 3, 16, 16}, 7)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  // conv9 writes the float output and stays NCHW: the chain is conv0, the pool, conv1-conv8.
  const std::vector<std::string> ops = layer_ops(plan);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.QConvNhwc"), 9) << plan.graph.dump();
  const engine::Layer& pool_layer = plan.layers[layer_index(plan, "pool")];
  EXPECT_EQ(node_named(plan, "pool").op_type, "MaxPoolNhwc");
  EXPECT_EQ(pool_layer.tactic, "pool.max_nhwc.u8.avx512");
  EXPECT_EQ(pool_layer.precision, "int8");
  EXPECT_NE(pool_layer.precision_note.find("pools the uint8 tensor"), std::string::npos)
      << pool_layer.precision_note;
  // Ten INT8 layers of random weights drift from the float reference (cosine about 0.99); the
  // same engine with its tensors NCHW is the one to agree with.
  engine::BuildOptions nchw = int8_options(minmax_calibration(b, in));
  nchw.passes.disabled = {"qconv_nhwc"};
  auto twin = testing::build_engine(b, nchw);
  const std::vector<std::string> twin_ops = layer_ops(twin->plan());
  EXPECT_EQ(std::count(twin_ops.begin(), twin_ops.end(), "kiln.QConvNhwc"), 0);
  EXPECT_GT(cosine(run_engine(*engine, in)[0], run_engine(*twin, in)[0]), 0.9999);
  // Without oneDNN the chain runs on kiln's own channels-last kernel, all but the stem (3 input
  // channels: not whole quads), which then stays NCHW.
  engine::BuildOptions own = int8_options(minmax_calibration(b, in));
  own.tactic_sources = {"-onednn"};
  auto kiln_only = testing::build_engine(b, own);
  const engine::Plan& kp = kiln_only->plan();
  EXPECT_EQ(node_named(kp, "conv0").op_type, "QConv");
  for (size_t i = 0; i < kp.graph.nodes.size(); ++i) {
    if (kp.graph.nodes[i].op_type == "QConvNhwc") {
      EXPECT_EQ(kp.layers[i].tactic, "qconv_nhwc.vnni.u8s8.avx512") << kp.graph.nodes[i].name;
    }
  }
  const std::vector<std::string> kiln_ops = layer_ops(kp);
  EXPECT_EQ(std::count(kiln_ops.begin(), kiln_ops.end(), "kiln.QConvNhwc"), 8) << kp.graph.dump();
  EXPECT_GT(cosine(run_engine(*kiln_only, in)[0], run_engine(*twin, in)[0]), 0.9999);
}

// A squeeze-and-excitation block between INT8 convolutions: the channel scaling and the
// quantization of its product run as one kiln.ScaleQuantize (quant/scale_quantize_fusion.h).
TEST(Int8Engine, SqueezeExcitationScaleQuantizesInOnePass) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 10, 10}).output("y");
  b.initializer("w1", {8, 3, 3, 3}, testing::test_wave(216, 0.3f, 0.7f))
      .initializer("wse", {8, 8, 1, 1}, testing::test_wave(64, 0.4f, 0.9f))
      .initializer("w2", {4, 8, 1, 1}, testing::test_wave(32, 0.5f, 1.3f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("GlobalAveragePool", {"r1"}, {"g"}, "squeeze");
  b.node("Conv", {"g", "wse"}, {"e"}, "excite");
  b.node("Sigmoid", {"e"}, {"s"}, "gate");
  b.node("Mul", {"r1", "s"}, {"m"}, "scale");
  b.node("Conv", {"m", "w2"}, {"y"}, "conv2");
  const runtime::NamedTensors in = {{"x", testing::random_f32({2, 3, 10, 10}, 9)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  const std::vector<std::string> ops = layer_ops(plan);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "kiln.ScaleQuantize"), ops.end())
      << ::testing::PrintToString(ops);
  EXPECT_EQ(std::find(ops.begin(), ops.end(), "Mul"), ops.end()) << ::testing::PrintToString(ops);
  expect_close_to_reference(*engine, b, in);
}

// Moving a uint8 QuantizeLinear in front of a MaxPool changes no value: the max of quantized
// values is the quantized max (signed range centred on 128, pads, a stride that skips inputs).
TEST(Int8Engine, QuantizeBeforeMaxPoolIsExact) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 9, 10}).output("y");
  b.initializer("s", {}, {0.013f});
  testing::uint8_initializer(b, "zp", {}, {128});
  auto& pool = b.node("MaxPool", {"x"}, {"p"}, "pool");
  testing::set_attr_ints(pool, "kernel_shape", {2, 3});
  testing::set_attr_ints(pool, "strides", {3, 2});
  testing::set_attr_ints(pool, "pads", {1, 0, 0, 1});
  b.node("QuantizeLinear", {"p", "s", "zp"}, {"y"}, "q");
  const runtime::NamedTensors in = {{"x", testing::random_f32({2, 3, 9, 10}, 3)}};
  const std::vector<Tensor> want = testing::reference_outputs(b, in);

  ir::Graph g = testing::import_model(b);
  std::vector<std::string> log;
  ASSERT_EQ(quant::hoist_quantize_over_maxpool(g, log), 1);
  ASSERT_TRUE(g.verify().is_ok()) << g.verify().to_string();
  ASSERT_TRUE(ops::infer_graph_shapes(g).is_ok());
  EXPECT_EQ(g.nodes[0].op_type, "QuantizeLinear");
  auto exec = runtime::ReferenceExecutor::create(g);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto got = exec->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), 1u);
  ASSERT_EQ((*got)[0].dtype(), DType::kU8);
  EXPECT_EQ(std::memcmp((*got)[0].raw_data(), want[0].raw_data(), want[0].nbytes()), 0);
  EXPECT_EQ(quant::hoist_quantize_over_maxpool(g, log), 0);  // already uint8
}

// Two INT8 branches joined by a Concat that an INT8 layer reads: the Concat joins uint8 (each
// branch writes it with the Concat's encoding); and YOLOv8's SPPF (a convolution, three MaxPools
// in a row, a Concat of all four) runs on uint8 from the convolution to the last one: the hoists
// over the Concat and the MaxPools meet, and the tensors quantized twice keep one QuantizeLinear.
TEST(Int8Engine, ConcatAndSppfJoinUint8) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 9, 9}).output("y");
  b.initializer("w1", {8, 3, 3, 3}, testing::test_wave(216, 0.3f, 0.7f))
      .initializer("w2", {8, 3, 1, 1}, testing::test_wave(24, 0.6f, 1.1f))
      .initializer("w3", {8, 16, 1, 1}, testing::test_wave(128, 0.5f, 1.3f))
      .initializer("w4", {4, 32, 1, 1}, testing::test_wave(128, 0.4f, 0.8f));
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"}, "relu1");
  b.node("Conv", {"x", "w2"}, {"c2"}, "conv2");
  testing::set_attr_int(b.node("Concat", {"r1", "c2"}, {"cat"}, "cat"), "axis", 1);
  b.node("Conv", {"cat", "w3"}, {"c3"}, "conv3");
  std::vector<std::string> parts = {"c3"};
  for (int i = 0; i < 3; ++i) {
    const std::string p = "p" + std::to_string(i);
    auto& pool = b.node("MaxPool", {parts.back()}, {p}, "pool" + std::to_string(i));
    testing::set_attr_ints(pool, "kernel_shape", {5, 5});
    testing::set_attr_ints(pool, "pads", {2, 2, 2, 2});
    parts.push_back(p);
  }
  testing::set_attr_int(b.node("Concat", parts, {"sppf"}, "sppf"), "axis", 1);
  b.node("Conv", {"sppf", "w4"}, {"y"}, "conv4");
  const runtime::NamedTensors in = {{"x", testing::random_f32({2, 3, 9, 9}, 11)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(layer_ops(plan), (std::vector<std::string>{"QuantizeLinear", "kiln.QConv", "kiln.QConv",
                                                       "Concat", "kiln.QConv", "MaxPool", "MaxPool",
                                                       "MaxPool", "Concat", "kiln.QConv"}));
  for (const std::string name : {"conv1", "conv2", "conv3"}) {
    EXPECT_EQ(node_named(plan, name).attrs.get_int("output_type", 0), 2) << name;
  }
  for (const std::string name : {"cat", "sppf", "pool2"}) {
    EXPECT_EQ(plan.graph.value(node_named(plan, name).outputs[0]).desc.dtype, DType::kU8) << name;
    EXPECT_EQ(plan.layers[layer_index(plan, name)].precision, "int8") << name;
  }
  expect_close_to_reference(*engine, b, in);
}

// Quantizing a Concat's inputs with its output's encoding changes no value (one input twice, parts
// of other ranges than the whole's); a second QuantizeLinear of a tensor with the same encoding
// merges into the first.
TEST(Int8Engine, QuantizeBeforeConcatIsExactAndDuplicatesMerge) {
  OnnxBuilder b;
  b.input("a", onnx::TensorProto::FLOAT, {2, 3, 4}).input("c", onnx::TensorProto::FLOAT, {2, 5, 4});
  b.output("y").output("z");
  b.initializer("s", {}, {0.021f});
  testing::uint8_initializer(b, "zp", {}, {100});
  testing::set_attr_int(b.node("Concat", {"a", "c", "a"}, {"cat"}, "cat"), "axis", 1);
  b.node("QuantizeLinear", {"cat", "s", "zp"}, {"y"}, "q");
  b.node("QuantizeLinear", {"c", "s", "zp"}, {"z"}, "qc");  // a graph output: stays
  runtime::NamedTensors in = {{"a", testing::random_f32({2, 3, 4}, 3)},
                              {"c", testing::random_f32({2, 5, 4}, 4)}};
  for (float& v : in["c"].span<float>()) v *= 3.0f;  // past the encoding's range: clamps
  const std::vector<Tensor> want = testing::reference_outputs(b, in);

  ir::Graph g = testing::import_model(b);
  std::vector<std::string> log;
  ASSERT_EQ(quant::hoist_quantize_over_concat(g, log), 1);
  ASSERT_TRUE(g.verify().is_ok()) << g.verify().to_string();
  ASSERT_TRUE(ops::infer_graph_shapes(g).is_ok());
  // One QuantizeLinear per distinct input (a twice), before the Concat, which writes y.
  EXPECT_EQ(testing::op_types(g), (std::vector<std::string>{"QuantizeLinear", "QuantizeLinear",
                                                            "Concat", "QuantizeLinear"}));
  EXPECT_EQ(quant::hoist_quantize_over_concat(g, log), 0);  // already uint8
  EXPECT_EQ(quant::merge_duplicate_quantizes(g), 0);        // qc writes a graph output
  auto exec = runtime::ReferenceExecutor::create(g);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto got = exec->run(in);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  ASSERT_EQ(got->size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ((*got)[i].dtype(), DType::kU8);
    EXPECT_EQ(std::memcmp((*got)[i].raw_data(), want[i].raw_data(), want[i].nbytes()), 0) << i;
  }
}

TEST(Int8Engine, DuplicateQuantizesOfATensorMerge) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {6}).output("y");
  b.initializer("s", {}, {0.05f});
  testing::uint8_initializer(b, "zp", {}, {128});
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q1"}, "q1");
  b.node("QuantizeLinear", {"x", "s", "zp"}, {"q2"}, "q2");
  testing::set_attr_int(b.node("Concat", {"q1", "q2"}, {"y"}, "cat"), "axis", 0);
  ir::Graph g = testing::import_model(b);
  EXPECT_EQ(quant::merge_duplicate_quantizes(g), 1);
  ASSERT_TRUE(g.verify().is_ok()) << g.verify().to_string();
  EXPECT_EQ(testing::op_types(g), (std::vector<std::string>{"QuantizeLinear", "Concat"}));
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.nodes[1].inputs[1], g.nodes[0].outputs[0]);
}

// ResNet's downsampling block: two convolutions of one input, added, then ReLU. The Add fuses
// into one convolution; the other's output, read only as that residual, is written as uint8 when
// the calibration has its range (signed: centred on 128), and stays float when it has none.
TEST(Int8Engine, ResidualOnlyOutputIsWrittenAsUint8WhenItHasARange) {
  OnnxBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 4, 6, 6}).output("y");
  b.initializer("wa", {8, 4, 1, 1}, testing::test_wave(32, 0.4f, 0.9f))
      .initializer("wb", {8, 4, 1, 1}, testing::test_wave(32, 0.3f, 0.5f));
  b.node("Conv", {"x", "wa"}, {"a"}, "conv_a");
  b.node("Conv", {"x", "wb"}, {"c"}, "conv_b");
  b.node("Add", {"a", "c"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  const runtime::NamedTensors in = {{"x", testing::random_f32({2, 4, 6, 6}, 9)}};
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  for (const bool with_range : {true, false}) {
    quant::Calibration c = minmax_calibration(b, in);
    auto engine = testing::build_engine(b, int8_options(c));
    const bool a_fused = node_named(engine->plan(), "conv_a").inputs.size() == 5;
    if (!with_range) {
      c.tensors.erase(a_fused ? "c" : "a");
      engine = testing::build_engine(b, int8_options(c));
    }
    const ir::Node& r = node_named(engine->plan(), a_fused ? "conv_b" : "conv_a");
    const ir::Node& f = node_named(engine->plan(), a_fused ? "conv_a" : "conv_b");
    ASSERT_EQ(f.inputs.size(), 5u);
    EXPECT_EQ(f.inputs[4], r.outputs[0]);
    if (with_range) {
      EXPECT_EQ(r.attrs.get_int("output_type", 0), 2);
      EXPECT_EQ(r.attrs.get_int("y_zero_point", -1), 128);
      EXPECT_EQ(f.attrs.get_float("z_scale", 0), r.attrs.get_float("y_scale", 1));
      EXPECT_EQ(f.attrs.get_int("z_zero_point", -1), 128);
    } else {
      EXPECT_NE(r.attrs.get_int("output_type", 1), 2);  // float (the default)
      EXPECT_EQ(engine->plan().graph.value(r.outputs[0]).desc.dtype, DType::kF32);
    }
    const std::vector<Tensor> got = run_engine(*engine, in);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_GT(cosine(got[0], ref[0]), 0.999) << "with range: " << with_range;
  }
}

TEST(Int8Engine, TensorWithoutRangeKeepsItsReaderInFloat) {
  SmallCnn m;
  quant::Calibration c = minmax_calibration(m.model, m.in);
  c.tensors.erase("x");
  auto engine = testing::build_engine(m.model, int8_options(c));
  const engine::Plan& plan = engine->plan();
  const size_t conv1 = layer_index(plan, "conv1");
  EXPECT_EQ(plan.layers[conv1].precision, "fp32");
  EXPECT_EQ(plan.layers[conv1].precision_note,
            "fp32: the calibration has no range for its input 'x'");
  EXPECT_EQ(plan.layers[layer_index(plan, "conv2")].precision, "int8");
  bool logged = false;
  for (const std::string& line : plan.build_log) {
    logged = logged || line.find("layer 'conv1' (FusedConv) stays fp32") != std::string::npos;
  }
  EXPECT_TRUE(logged);
  const std::vector<Tensor> ref = testing::reference_outputs(m.model, m.in);
  EXPECT_GT(cosine(run_engine(*engine, m.in)[0], ref[0]), 0.999);
}

// A ViT's patch embedding becomes kiln.Patches + a GEMM (passes/patch_embedding.h); the GEMM's
// input is a tensor the calibration never saw, whose range is the image's: the GEMM runs INT8.
TEST(Int8Engine, PatchEmbeddingGemmTakesTheImagesRange) {
  OnnxBuilder b;
  b.input("x", 1, {1, 3, 8, 8});
  const Tensor w = testing::random_f32({6, 3, 4, 4}, 3);
  b.initializer("w", {6, 3, 4, 4},
                std::vector<float>(w.data<float>(), w.data<float>() + w.numel()));
  b.initializer("b", {6}, {0.1f, -0.2f, 0.3f, 0.0f, 0.5f, -0.1f});
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "embed");
  testing::set_attr_ints(conv, "kernel_shape", {4, 4});
  testing::set_attr_ints(conv, "strides", {4, 4});
  b.initializer_i64("shape", {3}, {1, 6, 4});
  b.node("Reshape", {"c", "shape"}, {"f"}, "flat");
  auto& t = b.node("Transpose", {"f"}, {"y"}, "tr");
  testing::set_attr_ints(t, "perm", {0, 2, 1});
  b.output("y");
  const runtime::NamedTensors in = {{"x", testing::random_f32({1, 3, 8, 8}, 4)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(layer_ops(plan),
            (std::vector<std::string>{"kiln.Patches", "QuantizeLinear", "kiln.QGemm"}));
  EXPECT_EQ(plan.layers[layer_index(plan, "embed")].precision, "int8");
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  EXPECT_GT(cosine(run_engine(*engine, in)[0], ref[0]), 0.999);
}

// gemm_view_hoisting moves a Reshape of a GEMM's rows ahead of the GEMM: the GEMM then reads a
// view of its input that the calibration never saw (as a ViT's attention output projections do),
// whose range is the input's: the GEMM runs INT8 on it.
TEST(Int8Engine, GemmReadingAPassMadeViewTakesItsSourcesRange) {
  OnnxBuilder b;
  b.input("x", 1, {6, 4});
  b.node("Relu", {"x"}, {"a"}, "act");
  b.initializer("w", {4, 5}, testing::weights(20));
  b.initializer("c", {5}, testing::weights(5, 0.3f));
  b.node("Gemm", {"a", "w", "c"}, {"g"}, "proj");
  b.initializer_i64("target", {3}, {2, 3, 5});
  b.node("Reshape", {"g", "target"}, {"y"}, "view");
  b.output("y");
  const runtime::NamedTensors in = {{"x", testing::random_f32({6, 4}, 5)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  const engine::Plan& plan = engine->plan();
  const ir::Node& proj = node_named(plan, "proj");
  const std::string& a = plan.graph.value(proj.inputs[0]).name;
  ASSERT_EQ(proj.op_type, "QGemm") << plan.layers[layer_index(plan, "proj")].precision_note;
  EXPECT_EQ(plan.layers[layer_index(plan, "proj")].precision, "int8");
  EXPECT_NE(a, "a");  // the GEMM reads the view, quantized
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  EXPECT_GT(cosine(run_engine(*engine, in)[0], ref[0]), 0.999);
}

TEST(Int8Engine, PlaceholderRangesWithoutCalibrationWarn) {
  SmallCnn m;
  auto engine = testing::build_engine(m.model, int8_options(std::nullopt));
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(plan.layers[layer_index(plan, "fc")].precision, "int8");
  bool warned = false;
  for (const std::string& line : plan.build_log) {
    warned = warned || line.starts_with("warning: --int8 without calibration");
  }
  EXPECT_TRUE(warned);
  EXPECT_NEAR(node_named(plan, "conv1").attrs.get_float("x_scale", 0), 2.0 / 127, 1e-7);
}

TEST(Int8Engine, LayerPrecisionsPreferObeyAndNone) {
  SmallCnn m;
  const quant::Calibration c = minmax_calibration(m.model, m.in);
  engine::BuildOptions o = int8_options(c);
  o.layer_precisions = {{"conv*", "int8"}, {"conv2", "fp32"}};
  o.precision_constraints = quant::PrecisionConstraints::kObey;
  auto engine = testing::build_engine(m.model, o);
  const engine::Plan& plan = engine->plan();
  EXPECT_EQ(plan.layers[layer_index(plan, "conv2")].precision, "fp32");
  EXPECT_EQ(plan.layers[layer_index(plan, "conv2")].precision_note,
            "fp32: --layerPrecisions ('conv2')");
  EXPECT_EQ(plan.layers[layer_index(plan, "conv1")].precision, "int8");

  // Obey: an int8 request that cannot be met fails the build, naming the layer and the reason.
  quant::Calibration no_x = c;
  no_x.tensors.erase("x");
  o = int8_options(no_x);
  o.layer_precisions = {{"conv1", "int8"}};
  o.precision_constraints = quant::PrecisionConstraints::kObey;
  auto failed = engine::build_plan(testing::import_model(m.model), o);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("layer 'conv1'"), std::string::npos);
  EXPECT_NE(failed.status().message().find("no range for its input 'x'"), std::string::npos);
  // Prefer: the same request is a warning.
  o.precision_constraints = quant::PrecisionConstraints::kPrefer;
  auto preferred = engine::build_plan(testing::import_model(m.model), o);
  ASSERT_TRUE(preferred.is_ok()) << preferred.status().to_string();
  // None: the rules are ignored, with a warning.
  o = int8_options(c);
  o.layer_precisions = {{"*", "fp32"}};
  auto ignored = engine::build_plan(testing::import_model(m.model), o);
  ASSERT_TRUE(ignored.is_ok());
  EXPECT_EQ(ignored->layers[layer_index(*ignored, "conv1")].precision, "int8");
}

TEST(Int8Engine, Int8RequestWithoutInt8FailsUnderObey) {
  SmallCnn m;
  engine::BuildOptions o;
  o.optimization_level = 0;
  o.layer_precisions = {{"conv1", "int8"}};
  o.precision_constraints = quant::PrecisionConstraints::kObey;
  auto failed = engine::build_plan(testing::import_model(m.model), o);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("has no --int8"), std::string::npos);
}

// Gemm's alpha, beta and transB fold into the INT8 constants; MatMul with constant weights lowers.
TEST(Int8Engine, GemmAttributesAndMatMulFold) {
  OnnxBuilder b;
  b.input("x", 1, {3, 6});
  b.initializer("w", {4, 6}, testing::weights(24));
  b.initializer("c", {1, 4}, {0.5f, -0.5f, 1.0f, 0.0f});
  b.initializer("m", {4, 5}, testing::weights(20, 0.3f));
  auto& g = b.node("Gemm", {"x", "w", "c"}, {"h"}, "fc");
  testing::set_attr_int(g, "transB", 1);
  testing::set_attr_float(g, "alpha", 0.5f);
  testing::set_attr_float(g, "beta", 2.0f);
  b.node("MatMul", {"h", "m"}, {"y"}, "proj");
  b.output("y");
  const runtime::NamedTensors in = {{"x", testing::random_f32({3, 6}, 3)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  EXPECT_EQ(layer_ops(engine->plan()),
            (std::vector<std::string>{"QuantizeLinear", "kiln.QGemm", "kiln.QGemm"}));
  EXPECT_EQ(node_named(engine->plan(), "fc").attrs.get_int("output_type", 1), 2);
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  EXPECT_GT(cosine(run_engine(*engine, in)[0], ref[0]), 0.999);
}

// A transformer block's x + fc2(relu(fc1(x))): the residual Add fuses into fc2
// (gemm_residual_fusion) and survives INT8 lowering as QGemm's Z, which the first GEMM's float
// input feeds.
TEST(Int8Engine, AGemmResidualLowersToQGemmsZ) {
  OnnxBuilder b;
  b.input("x", 1, {1, 5, 8});
  b.initializer("w1", {8, 12}, testing::weights(96));
  b.initializer("b1", {12}, testing::weights(12, 0.4f));
  b.initializer("w2", {12, 8}, testing::weights(96, 0.9f));
  b.initializer("b2", {8}, testing::weights(8, 1.3f));
  b.node("MatMul", {"x", "w1"}, {"m1"}, "fc1");
  b.node("Add", {"m1", "b1"}, {"h1"}, "fc1_bias");
  b.node("Relu", {"h1"}, {"a1"}, "relu");
  b.node("MatMul", {"a1", "w2"}, {"m2"}, "fc2");
  b.node("Add", {"m2", "b2"}, {"h2"}, "fc2_bias");
  b.node("Add", {"x", "h2"}, {"y"}, "residual");
  b.output("y");
  const runtime::NamedTensors in = {{"x", testing::random_f32({1, 5, 8}, 11)}};
  auto engine = testing::build_engine(b, int8_options(minmax_calibration(b, in)));
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(layer_ops(engine->plan()),
            (std::vector<std::string>{"QuantizeLinear", "kiln.QGemm", "kiln.QGemm"}));
  const ir::Node& fc2 = node_named(engine->plan(), "fc2");
  ASSERT_EQ(fc2.inputs.size(), 5u);
  EXPECT_EQ(engine->plan().graph.value(fc2.inputs[4]).name, "x");
  EXPECT_EQ(fc2.fused_from, (std::vector<std::string>{"fc2", "fc2_bias", "residual"}));
  const std::vector<Tensor> ref = testing::reference_outputs(b, in);
  EXPECT_GT(cosine(run_engine(*engine, in)[0], ref[0]), 0.999);
}

TEST(Int8Engine, PrecisionSurvivesSaveAndLoad) {
  SmallCnn m;
  auto engine = testing::build_engine(m.model, int8_options(minmax_calibration(m.model, m.in)));
  testing::TempDir dir;
  const auto path = dir.path() / "int8.plan";
  ASSERT_TRUE(engine::save_plan(engine->plan(), path).is_ok());
  auto loaded = engine::load_plan(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  for (size_t i = 0; i < loaded->layers.size(); ++i) {
    EXPECT_EQ(loaded->layers[i].precision, engine->plan().layers[i].precision);
    EXPECT_EQ(loaded->layers[i].precision_note, engine->plan().layers[i].precision_note);
  }
  auto reloaded = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(reloaded.is_ok());
  const std::vector<Tensor> a = run_engine(*engine, m.in), b = run_engine(**reloaded, m.in);
  EXPECT_EQ(testing::compare_tensors(b[0], a[0], {0, 0}), "");
}

}  // namespace
}  // namespace kiln
