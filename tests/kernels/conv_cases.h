#pragma once
// The cases every convolution tactic test builds (builtin, x86, oneDNN): a 2-D geometry, the Conv
// and kiln.FusedConv cases made from it, and the activations kiln.FusedConv fuses.

#include <string>
#include <vector>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {

struct ConvGeom {
  int64_t batch = 1, cin = 1, cout = 1, group = 1;
  int64_t h = 5, w = 7;
  int64_t kh = 3, kw = 3;
  int64_t stride = 1, pad = 0, dil = 1;
};

// Output extent along one axis (< 1 when the window does not fit).
inline int64_t conv_out_dim(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - (k - 1) * dil - 1) / stride + 1;
}

// The output has at least one pixel.
inline bool conv_fits(const ConvGeom& g) {
  return conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil) >= 1 &&
         conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil) >= 1;
}

// Conv over random X and W (constant unless const_w is false), with a constant bias or none.
inline OpCase conv_case(const ConvGeom& g, bool bias = true, bool const_w = true,
                        uint64_t seed = 1) {
  OpCase c;
  c.op_type = "Conv";
  c.attrs = attrs({{"group", g.group},
                   {"strides", Ints{g.stride, g.stride}},
                   {"pads", Ints{g.pad, g.pad, g.pad, g.pad}},
                   {"dilations", Ints{g.dil, g.dil}}});
  c.inputs.push_back(in(random_f32({g.batch, g.cin, g.h, g.w}, seed)));
  Tensor w = random_f32({g.cout, g.cin / g.group, g.kh, g.kw}, seed + 1);
  c.inputs.push_back(const_w ? constant(w) : in(w));
  if (bias) c.inputs.push_back(constant(random_f32({g.cout}, seed + 2)));
  return c;
}

// kiln.FusedConv over conv_case(g, bias): an optional residual Z of Y's shape (after an absent
// bias when there is none) and an activation ("" for none).
inline OpCase fused_conv_case(const ConvGeom& g, bool bias, bool residual,
                              const std::string& activation, std::vector<float> params = {}) {
  OpCase c = conv_case(g, bias);
  c.op_type = "FusedConv";
  c.domain = "kiln";
  c.opset = 1;
  if (!activation.empty()) c.attrs.set("activation", activation);
  if (!params.empty()) c.attrs.set("activation_params", params);
  if (residual) {
    if (!bias) c.inputs.push_back(absent());
    const Dims y{g.batch, g.cout, conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil),
                 conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil)};
    c.inputs.push_back(in(random_f32(y, 9)));
  }
  return c;
}

struct ActCase {
  std::string name;  // "" for none
  std::vector<float> params;
};

// Every activation kiln.FusedConv and kiln.FusedGemm fuse, Clip twice (ReLU6 and a window with a
// negative floor).
inline const std::vector<ActCase>& fused_activations() {
  static const std::vector<ActCase> cases = {
      {"", {}},
      {"Relu", {}},
      {"Clip", {0.0f, 6.0f}},
      {"Clip", {-0.5f, 0.25f}},
      {"LeakyRelu", {0.1f}},
      {"Sigmoid", {}},
      {"Silu", {}},
      {"HardSwish", {}},
      {"HardSigmoid", {0.2f, 0.5f}},
      {"Gelu", {}},
      {"Tanh", {}},
  };
  return cases;
}

}  // namespace kiln::testing
