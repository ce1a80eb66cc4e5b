#pragma once
// The cases every convolution tactic test builds (builtin, x86, oneDNN): a 2-D geometry, the Conv
// and kiln.FusedConv cases made from it, the activations kiln.FusedConv fuses, and the geometry
// sweeps the x86 float and INT8 tests share, and the kernel parameters of a geometry (for tests
// that call the kernels directly).

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/conv.h"
#include "kernels/ref/layout.h"
#include "kernels/tactic_test_util.h"

namespace kiln::testing {

struct ConvGeom {
  int64_t batch = 1, cin = 1, cout = 1, group = 1;
  int64_t h = 5, w = 7;
  int64_t kh = 3, kw = 3;
  int64_t stride = 1, pad = 0, dil = 1;
};

// Output extent along one axis (0 when the window does not fit: C++ division truncates toward
// zero, so a window one short of a stride-2 input would otherwise count as one pixel).
inline int64_t conv_out_dim(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  const int64_t room = in + 2 * pad - (k - 1) * dil - 1;
  return room < 0 ? 0 : room / stride + 1;
}

// The output has at least one pixel.
inline bool conv_fits(const ConvGeom& g) {
  return conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil) >= 1 &&
         conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil) >= 1;
}

// The kernels' parameters of g (square strides, dilations and symmetric padding).
inline kernels::cpu::Conv2DParams conv2d_params(const ConvGeom& g) {
  kernels::cpu::Conv2DParams p;
  p.batch = g.batch;
  p.in_c = g.cin;
  p.out_c = g.cout;
  p.group = g.group;
  p.in_h = g.h;
  p.in_w = g.w;
  p.k_h = g.kh;
  p.k_w = g.kw;
  p.stride_h = p.stride_w = g.stride;
  p.dil_h = p.dil_w = g.dil;
  p.pad_top = p.pad_left = g.pad;
  p.out_h = conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil);
  p.out_w = conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil);
  return p;
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

// kiln.ConvNchw16c over g: X and the residual blocked and random (padding lanes too: no kernel may
// read X's), W constant, an optional constant bias (an absent input before a residual).
inline OpCase nchw16c_case(const ConvGeom& g, bool bias = true, bool residual = false,
                           const ActCase& act = {}) {
  const OpCase conv = conv_case(g, bias);
  OpCase c;
  c.op_type = "ConvNchw16c";
  c.domain = "kiln";
  c.opset = 1;
  c.attrs = conv.attrs;
  if (!act.name.empty()) c.attrs.set("activation", act.name);
  if (!act.params.empty()) c.attrs.set("activation_params", act.params);
  c.inputs.push_back(in(random_f32({g.batch, kernels::ref::padded_channels(g.cin), g.h, g.w}, 3)));
  c.inputs.push_back(conv.inputs[1]);
  if (bias) c.inputs.push_back(conv.inputs[2]);
  if (residual) {
    if (!bias) c.inputs.push_back(absent());
    c.inputs.push_back(in(random_f32({g.batch, kernels::ref::padded_channels(g.cout),
                                      conv_out_dim(g.h, g.kh, g.stride, g.pad, g.dil),
                                      conv_out_dim(g.w, g.kw, g.stride, g.pad, g.dil)},
                                     9)));
  }
  return c;
}

// nchw16c_case with X NCHW (x_layout "nchw": a first layer's few channels), Y blocked.
inline OpCase plain_x_nchw16c_case(const ConvGeom& g, bool bias = true, bool residual = false,
                                   const ActCase& act = {}) {
  OpCase c = nchw16c_case(g, bias, residual, act);
  c.inputs[0] = in(random_f32({g.batch, g.cin, g.h, g.w}, 6));
  c.attrs.set("x_layout", std::string("nchw"));
  return c;
}

// c (an nchw16c_case of g) with input S, a channel scale on X: [batch or 1, Cp, 1, 1].
inline OpCase with_channel_scale(OpCase c, const ConvGeom& g, bool per_image) {
  while (c.inputs.size() < 4) c.inputs.push_back(absent());
  c.inputs.push_back(
      in(random_f32({per_image ? g.batch : 1, kernels::ref::padded_channels(g.cin), 1, 1}, 11)));
  return c;
}

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

// Stricter than conv_fits: the dilated window fits inside the padded input.
inline bool window_fits(const ConvGeom& g) {
  const int64_t span = (std::max(g.kh, g.kw) - 1) * g.dil + 1;
  return g.h + 2 * g.pad >= span && g.w + 2 * g.pad >= span && conv_fits(g);
}

// The channel counts the x86 convolution tests sweep: one channel, tails of the vector and register
// tiles, groups. `odd` is the one pair the float and INT8 tests choose differently.
inline std::vector<ConvGeom> x86_channel_cases(const ConvGeom& odd) {
  return {{.cin = 1, .cout = 1},
          {.cin = 3, .cout = 7},
          odd,
          {.cin = 17, .cout = 3},
          {.cin = 33, .cout = 35},
          {.cin = 6, .cout = 9, .group = 3},
          {.cin = 32, .cout = 32, .group = 2}};
}

// g with a square k x k window, the stride, symmetric padding and dilation.
inline ConvGeom with_window(ConvGeom g, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  g.kh = g.kw = k;
  g.stride = stride;
  g.pad = pad;
  g.dil = dil;
  return g;
}

// Each of `channels` on a 6x13 image with the square kernels `ks`, strides 1 and 2, pads 0 and 1,
// dilations 1 and 2: the geometries `fits` accepts.
inline std::vector<ConvGeom> channel_sweep(std::span<const ConvGeom> channels,
                                           std::initializer_list<int64_t> ks,
                                           bool (*fits)(const ConvGeom&) = window_fits) {
  std::vector<ConvGeom> out;
  for (ConvGeom plane : channels) {
    plane.h = 6;
    plane.w = 13;
    for (int64_t k : ks) {
      for (int64_t stride : {1, 2}) {
        for (int64_t pad : {0, 1}) {
          for (int64_t dil : {1, 2}) {
            const ConvGeom g = with_window(plane, k, stride, pad, dil);
            if (fits(g)) out.push_back(g);
          }
        }
      }
    }
  }
  return out;
}

// Depthwise convolutions of `channels_mult` (channels, multiplier) with 3x3 and 5x5 kernels,
// strides 1 and 2, pads 0 to 2, dilations 1 and 2, widths 1, 7, 19 and 70 (heights 6 and 7: odd
// output heights leave a row after the row pairs): the geometries whose window fits.
inline std::vector<ConvGeom> depthwise_sweep(
    std::initializer_list<std::pair<int64_t, int64_t>> channels_mult) {
  std::vector<ConvGeom> out;
  for (auto [c, mult] : channels_mult) {
    for (int64_t k : {3, 5}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t pad : {0, 1, 2}) {
          for (int64_t dil : {1, 2}) {
            for (int64_t w : {1, 7, 19, 70}) {
              const ConvGeom plane{.cin = c, .cout = c * mult, .group = c, .h = 6 + w % 2, .w = w};
              const ConvGeom g = with_window(plane, k, stride, pad, dil);
              if (window_fits(g)) out.push_back(g);
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace kiln::testing
