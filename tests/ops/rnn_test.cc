// RNN, GRU and LSTM. The cases use hidden_size = input_size = 1 and piecewise-linear activations
// (Relu, Affine, HardSigmoid) or sigmoid at exact points (sigmoid(0) = 0.5, sigmoid(ln 3) = 0.75)
// so that every expected value is computed by hand from the ONNX equations.
#include <cmath>
#include <limits>
#include <optional>

#include "elementwise_test_util.h"
#include "math_test_util.h"

namespace kiln::testing {
namespace {

using namespace ew;
using Inputs = std::vector<std::optional<Tensor>>;
const float kLn3 = std::log(3.0f);

OpCase rnn_case(std::string op_type, Inputs inputs, ir::Attributes a, int num_outputs = 2,
                int opset = 14) {
  OpCase c;
  c.op_type = std::move(op_type);
  c.opset = opset;
  c.attrs = std::move(a);
  c.num_outputs = num_outputs;
  for (auto& in : inputs) c.inputs.push_back({std::move(in), false});
  return c;
}

ir::Attributes with(ir::Attributes a, std::string name, ir::AttrValue v) {
  a.set(std::move(name), std::move(v));
  return a;
}

ir::Attributes relu_rnn() {
  return attrs({{"hidden_size", int64_t{1}}, {"activations", std::vector<std::string>{"Relu"}}});
}
// X = [1, 2] (seq 2, batch 1), W = 0.5, R = 0.25, B = [0.1, -0.1] (the two biases add up to 0).
Inputs simple_rnn_inputs() {
  return {t<float>({2, 1, 1}, {1, 2}), t<float>({1, 1, 1}, {0.5f}), t<float>({1, 1, 1}, {0.25f}),
          t<float>({1, 2}, {0.1f, -0.1f})};
}

TEST(Rnn, SimpleRnnForwardAndReverse) {
  // h1 = relu(0.5 * 1) = 0.5; h2 = relu(0.5 * 2 + 0.25 * 0.5) = 1.125.
  const OpCase c = rnn_case("RNN", simple_rnn_inputs(), relu_rnn());
  expect_output(c, t<float>({2, 1, 1, 1}, {0.5f, 1.125f}), 0);
  expect_output(c, t<float>({1, 1, 1}, {1.125f}), 1);
  // Reverse: h(t=1) = relu(0.5 * 2) = 1; h(t=0) = relu(0.5 * 1 + 0.25 * 1) = 0.75.
  const OpCase r =
      rnn_case("RNN", simple_rnn_inputs(), with(relu_rnn(), "direction", std::string("reverse")));
  expect_output(r, t<float>({2, 1, 1, 1}, {0.75f, 1.0f}), 0);
  expect_output(r, t<float>({1, 1, 1}, {0.75f}), 1);
  // Default activation tanh: h1 = tanh(0.5), h2 = tanh(1 + 0.25 * tanh(0.5)).
  const double h1 = std::tanh(0.5);
  const OpCase d = rnn_case("RNN", simple_rnn_inputs(), attrs({{"hidden_size", int64_t{1}}}));
  expect_output(d, t<float>({1, 1, 1}, {static_cast<float>(std::tanh(1.0 + 0.25 * h1))}), 1);
}

// A NaN input stays NaN through Relu and HardSigmoid, as the Relu and HardSigmoid ops keep it (a
// max / min against the bounds had turned it into 0 and 1).
TEST(Rnn, NanPassesThroughReluAndHardSigmoid) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Inputs in = simple_rnn_inputs();
  in[0] = t<float>({2, 1, 1}, {nan, 2});
  const OpCase relu = rnn_case("RNN", in, relu_rnn());
  expect_output(relu, t<float>({2, 1, 1, 1}, {nan, nan}), 0);
  const OpCase hard = rnn_case("RNN", in,
                               attrs({{"hidden_size", int64_t{1}},
                                      {"activations", std::vector<std::string>{"HardSigmoid"}}}));
  expect_output(hard, t<float>({2, 1, 1, 1}, {nan, nan}), 0);
}

TEST(Rnn, Bidirectional) {
  // One activation name serves both directions. Y[t] holds [forward, reverse].
  const OpCase c = rnn_case("RNN",
                            {t<float>({2, 1, 1}, {1, 2}), t<float>({2, 1, 1}, {0.5f, 0.5f}),
                             t<float>({2, 1, 1}, {0.25f, 0.25f})},
                            with(relu_rnn(), "direction", std::string("bidirectional")));
  expect_output(c, t<float>({2, 2, 1, 1}, {0.5f, 0.75f, 1.125f, 1.0f}), 0);
  expect_output(c, t<float>({2, 1, 1}, {1.125f, 0.75f}), 1);
}

TEST(Rnn, BatchMajorLayout) {
  // Batch 0 sees [1, 2], batch 1 sees [0, 1]: h = [0.5, 1.125] and [0, 0.5].
  Inputs in = simple_rnn_inputs();
  in[0] = t<float>({2, 2, 1}, {1, 2, 0, 1});
  const OpCase c = rnn_case("RNN", in, with(relu_rnn(), "layout", int64_t{1}));
  expect_output(c, t<float>({2, 2, 1, 1}, {0.5f, 1.125f, 0.0f, 0.5f}), 0);
  expect_output(c, t<float>({2, 1, 1}, {1.125f, 0.5f}), 1);
}

TEST(Rnn, SequenceLengthsAndInitialState) {
  // Batch 1 runs one step from h0 = 2: relu(0.5 * 0 + 0.25 * 2) = 0.5; its Y at t = 1 is 0.
  Inputs in = simple_rnn_inputs();
  in[0] = t<float>({2, 2, 1}, {1, 0, 2, 1});
  in.push_back(t<int32_t>({2}, {2, 1}));
  in.push_back(t<float>({1, 2, 1}, {0, 2}));
  const OpCase c = rnn_case("RNN", in, relu_rnn());
  expect_output(c, t<float>({2, 1, 2, 1}, {0.5f, 0.5f, 1.125f, 0.0f}), 0);
  expect_output(c, t<float>({1, 2, 1}, {1.125f, 0.5f}), 1);
}

TEST(Rnn, ActivationParametersAndClip) {
  // Affine(alpha 2, beta 1): h1 = 2 * 0.5 + 1 = 2; h2 = 2 * (1 + 0.25 * 2) + 1 = 4.
  const ir::Attributes affine =
      attrs({{"hidden_size", int64_t{1}},
             {"activations", std::vector<std::string>{"affine"}},  // names are case-insensitive
             {"activation_alpha", std::vector<float>{2.0f}},
             {"activation_beta", std::vector<float>{1.0f}}});
  expect_output(rnn_case("RNN", simple_rnn_inputs(), affine), t<float>({1, 1, 1}, {4.0f}), 1);
  // clip 0.8 bounds the pre-activation: h2 = relu(min(1.125, 0.8)).
  expect_output(rnn_case("RNN", simple_rnn_inputs(), with(relu_rnn(), "clip", 0.8f)),
                t<float>({2, 1, 1, 1}, {0.5f, 0.8f}), 0);
}

// GRU with z = sigmoid(ln 3) = 0.75 (from Wb_z), r = sigmoid(0) = 0.5, Wh = Rh = 1, g = Relu:
// h = 0.25 * hh + 0.75 * h_prev.
Inputs gru_inputs(float rb_h) {
  return {t<float>({2, 1, 1}, {1, 2}), t<float>({1, 3, 1}, {0, 0, 1}),
          t<float>({1, 3, 1}, {0, 0, 1}), t<float>({1, 6}, {kLn3, 0, 0, 0, 0, rb_h})};
}
ir::Attributes gru_attrs(int64_t linear_before_reset) {
  return attrs({{"hidden_size", int64_t{1}},
                {"activations", std::vector<std::string>{"Sigmoid", "Relu"}},
                {"linear_before_reset", linear_before_reset}});
}

TEST(Rnn, Gru) {
  // hh = relu(x + Rh * (r * h) + Rb_h): t0 hh = 1, h = 0.25; t1 hh = 2.125, h = 0.71875.
  expect_output(rnn_case("GRU", gru_inputs(0), gru_attrs(0)),
                t<float>({2, 1, 1, 1}, {0.25f, 0.71875f}), 0);
  // With Rb_h = 1: t0 hh = 2, h = 0.5; t1 hh = relu(2 + 0.25 + 1) = 3.25, h = 1.1875.
  expect_output(rnn_case("GRU", gru_inputs(1), gru_attrs(0)), t<float>({1, 1, 1}, {1.1875f}), 1);
  // linear_before_reset: hh = relu(x + r * (Rh * h + Rb_h)): t0 hh = 1.5, h = 0.375;
  // t1 hh = 2 + 0.5 * 1.375 = 2.6875, h = 0.671875 + 0.28125 = 0.953125.
  expect_output(rnn_case("GRU", gru_inputs(1), gru_attrs(1)),
                t<float>({2, 1, 1, 1}, {0.375f, 0.953125f}), 0);
}

// LSTM gates i, o, f, c; only the cell input sees x (W_c = 1). f, g, h = HardSigmoid, Relu, Relu.
Inputs lstm_inputs(float bi, float bf, float rc) {
  return {t<float>({2, 1, 1}, {1, 2}), t<float>({1, 4, 1}, {0, 0, 0, 1}),
          t<float>({1, 4, 1}, {0, 0, 0, rc}), t<float>({1, 8}, {bi, 0, bf, 0, 0, 0, 0, 0})};
}
ir::Attributes lstm_attrs() {
  return attrs({{"hidden_size", int64_t{1}},
                {"activations", std::vector<std::string>{"HardSigmoid", "Relu", "Relu"}}});
}

TEST(Rnn, Lstm) {
  // i = hs(1.25) = 0.75, o = hs(0) = 0.5, f = hs(-1.25) = 0.25. t0: C = 0.75, h = 0.375;
  // t1: C = 0.25 * 0.75 + 0.75 * 2 = 1.6875, h = 0.84375.
  const OpCase c = rnn_case("LSTM", lstm_inputs(1.25f, -1.25f, 0), lstm_attrs(), 3);
  expect_output(c, t<float>({2, 1, 1, 1}, {0.375f, 0.84375f}), 0);
  expect_output(c, t<float>({1, 1, 1}, {0.84375f}), 1);
  expect_output(c, t<float>({1, 1, 1}, {1.6875f}), 2);
  // R_c = 1: t1 cell input relu(2 + 0.375) = 2.375, C = 0.1875 + 1.78125 = 1.96875.
  expect_output(rnn_case("LSTM", lstm_inputs(1.25f, -1.25f, 1), lstm_attrs(), 3),
                t<float>({1, 1, 1}, {1.96875f}), 2);
}

TEST(Rnn, LstmPeepholesAndInputForget) {
  // P = [i 1, o 1, f 0]: t0 i = 0.75, C = 0.75, o = hs(0.75) = 0.65, h = 0.4875;
  // t1 i = hs(1.25 + 0.75) = 0.9, C = 0.1875 + 1.8 = 1.9875, o = hs(1.9875) = 0.8975.
  Inputs in = lstm_inputs(1.25f, -1.25f, 0);
  in.insert(in.end(), {std::nullopt, std::nullopt, std::nullopt, t<float>({1, 3}, {1, 1, 0})});
  const OpCase c = rnn_case("LSTM", in, lstm_attrs(), 3);
  expect_output(c, t<float>({2, 1, 1, 1}, {0.4875f, 0.8975f * 1.9875f}), 0);
  expect_output(c, t<float>({1, 1, 1}, {1.9875f}), 2);
  // input_forget: f = 1 - i = 0.35 (i = hs(0.75) = 0.65) instead of hs(2.5) = 1.
  // t0 C = 0.65, h = 0.325; t1 C = 0.35 * 0.65 + 0.65 * 2 = 1.5275, h = 0.76375.
  expect_output(rnn_case("LSTM", lstm_inputs(0.75f, 2.5f, 0),
                         with(lstm_attrs(), "input_forget", int64_t{1}), 3),
                t<float>({2, 1, 1, 1}, {0.325f, 0.76375f}), 0);
  expect_output(rnn_case("LSTM", lstm_inputs(0.75f, 2.5f, 0), lstm_attrs(), 3),
                t<float>({1, 1, 1}, {1.95f}), 2);
}

TEST(Rnn, OtherFloatTypes) {
  Inputs d = {t<double>({2, 1, 1}, {1, 2}), t<double>({1, 1, 1}, {0.5}),
              t<double>({1, 1, 1}, {0.25})};
  expect_output(rnn_case("RNN", d, relu_rnn()), t<double>({1, 1, 1}, {1.125}), 1);
  Inputs h = {f16({2, 1, 1}, {1, 2}), f16({1, 1, 1}, {0.5f}), f16({1, 1, 1}, {0.25f})};
  expect_output(rnn_case("RNN", h, relu_rnn()), f16({1, 1, 1}, {1.125f}), 1);
}

TEST(Rnn, ShapeInference) {
  using math::sym;
  const auto x = ir::TensorDesc::of(DType::kF32, {sym("S"), sym("B"), ir::Dim::known(3)});
  const auto w = ir::TensorDesc::of_dims(DType::kF32, {2, 8, 3});
  const auto r = ir::TensorDesc::of_dims(DType::kF32, {2, 8, 2});
  const ir::Attributes a = attrs({{"direction", std::string("bidirectional")}});
  auto out = math::infer_one("LSTM", 14, a, {x, w, r}, {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[S,2,B,2]");  // hidden_size from R
  EXPECT_EQ((*out)[2].to_string(), "float32[2,B,2]");
  const auto xb = ir::TensorDesc::of(DType::kF32, {sym("B"), sym("S"), ir::Dim::known(3)});
  out = math::infer_one("LSTM", 14, with(a, "layout", int64_t{1}), {xb, w, r}, {}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[B,S,2,2]");
  EXPECT_EQ((*out)[1].to_string(), "float32[B,2,2]");
}

TEST(Rnn, InvalidAttributes) {
  const Inputs in = simple_rnn_inputs();
  const auto err = [&](ir::Attributes a, const char* fragment, int opset = 14) {
    expect_error(rnn_case("RNN", in, std::move(a), 2, opset), StatusCode::kInvalidModel, fragment);
  };
  err(with(relu_rnn(), "direction", std::string("sideways")), "direction");
  err(with(relu_rnn(), "layout", int64_t{0}), "layout exists only from opset 14", 7);
  err(with(relu_rnn(), "layout", int64_t{2}), "layout is 2");
  err(with(relu_rnn(), "clip", 0.0f), "clip");
  err(with(relu_rnn(), "hidden_size", int64_t{0}), "hidden_size is 0");
  err(with(relu_rnn(), "hidden_size", int64_t{2}), "input 1 (W)");
  err(with(relu_rnn(), "activations", std::vector<std::string>{"Swish"}), "unknown function");
  err(with(relu_rnn(), "activations", std::vector<std::string>{"Relu", "Relu"}),
      "activations has 2 entries");
  expect_error(rnn_case("LSTM", lstm_inputs(0, 0, 0),
                        with(lstm_attrs(), "activations", std::vector<std::string>{"Relu"}), 3),
               StatusCode::kInvalidModel, "expected 3 per direction");
}

TEST(Rnn, InvalidInputs) {
  const auto err = [&](Inputs in, const char* fragment,
                       StatusCode code = StatusCode::kInvalidModel) {
    expect_error(rnn_case("RNN", std::move(in), relu_rnn()), code, fragment);
  };
  Inputs in = simple_rnn_inputs();
  in[0] = t<float>({2, 1}, {1, 2});
  err(in, "rank 3");
  in = simple_rnn_inputs();
  in[1] = t<float>({1, 1, 2}, {1, 2});
  err(in, "input 1 (W)");
  in = simple_rnn_inputs();
  in[3] = t<float>({1, 3}, {1, 2, 3});
  err(in, "input 3 (B)");
  in = simple_rnn_inputs();
  in[2] = std::nullopt;
  err(in, "input 2 (R) is required");
  in = simple_rnn_inputs();
  in.push_back(t<int64_t>({1}, {2}));
  err(in, "sequence_lens) must be int32");
  in = simple_rnn_inputs();
  in.push_back(t<int32_t>({1}, {3}));
  err(in, "sequence_lens[0] is 3");
  in = simple_rnn_inputs();
  in.push_back(t<int32_t>({2}, {1, 1}));
  err(in, "input 4 (sequence_lens)");
  in = simple_rnn_inputs();
  in.push_back(std::nullopt);
  in.push_back(t<float>({1, 2, 1}, {0, 0}));
  err(in, "input 5 (initial_h)");
  in = simple_rnn_inputs();
  in[1] = t<double>({1, 1, 1}, {0.5});
  err(in, "dtype");
  err({t<int32_t>({2, 1, 1}, {1, 2}), t<int32_t>({1, 1, 1}, {1}), t<int32_t>({1, 1, 1}, {1})},
      "int32", StatusCode::kUnsupported);
  // LSTM's peepholes must be [dirs, 3 * hidden].
  Inputs l = lstm_inputs(0, 0, 0);
  l.insert(l.end(), {std::nullopt, std::nullopt, std::nullopt, t<float>({1, 2}, {1, 1})});
  expect_error(rnn_case("LSTM", l, lstm_attrs(), 3), StatusCode::kInvalidModel, "input 7 (P)");
}

}  // namespace
}  // namespace kiln::testing
