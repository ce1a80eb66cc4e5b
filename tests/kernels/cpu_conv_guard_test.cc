// The portable direct convolution (kernels/cpu/conv.cc) reads nothing past its buffers: each
// buffer ends where an unmapped page begins, so a read one float too far crashes the test. GCC 12
// at -O3 once vectorized the kernel-column loop into loads one input channel past the padded
// image's last, which crashed `kiln build` on a 3-channel stride-2 stem only when the scratch
// happened to end at a page boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/conv_cases.h"
#include "kernels/cpu/conv.h"
#include "kernels/guarded_floats.h"

namespace kiln::kernels::cpu {
namespace {

using testing::conv2d_params;
using testing::ConvGeom;
using testing::GuardedFloats;

// y through guarded buffers against y through ordinary ones: the same values, and no crash.
void run_guarded(const ConvGeom& g) {
  const Conv2DParams p = conv2d_params(g);
  const size_t nx = static_cast<size_t>(p.in_c * p.in_h * p.in_w);
  const size_t nw = static_cast<size_t>(p.out_c * (p.in_c / p.group) * p.k_h * p.k_w);
  const size_t ny = static_cast<size_t>(p.out_c * p.out_h * p.out_w);
  const size_t npacked = conv2d_direct_packed_weights_floats(p);
  const size_t nscratch = conv2d_direct_scratch_floats(p);
  std::vector<float> w(nw), x(nx), packed(npacked), scratch(nscratch), y(ny);
  for (size_t i = 0; i < nw; ++i) w[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < nx; ++i) x[i] = std::cos(0.3f * static_cast<float>(i));
  conv2d_direct_pack_weights(p, w.data(), packed.data());
  conv2d_direct(p, x.data(), packed.data(), ConvEpilogue{}, y.data(), scratch.data());

  GuardedFloats gx(nx), gpacked(npacked), gscratch(nscratch), gy(ny);
  std::memcpy(gx.data(), x.data(), nx * sizeof(float));
  conv2d_direct_pack_weights(p, w.data(), gpacked.data());
  conv2d_direct(p, gx.data(), gpacked.data(), ConvEpilogue{}, gy.data(), gscratch.data());
  for (size_t i = 0; i < ny; ++i) ASSERT_EQ(gy.data()[i], y[i]) << "output " << i;
}

TEST(CpuDirectConv, ReadsNothingPastItsBuffers) {
  const ConvGeom cases[] = {
      // MobileNetV2's and EfficientNet-B0's stem: the one that crashed
      {.cin = 3, .cout = 32, .h = 224, .w = 224, .stride = 2, .pad = 1},
      {.cin = 3, .cout = 8, .h = 10, .w = 10, .stride = 2, .pad = 1},
      {.cin = 2, .cout = 4, .h = 16, .w = 16, .stride = 2, .pad = 1},
      {.cin = 5, .cout = 4, .h = 12, .w = 12, .stride = 2, .pad = 1},
      {.cin = 3, .cout = 5, .h = 9, .w = 9, .pad = 1},
      {.cin = 4, .cout = 4, .h = 9, .w = 9},
      {.cin = 3, .cout = 6, .h = 11, .w = 11, .kh = 5, .kw = 5, .stride = 2, .pad = 2},
      {.cin = 6, .cout = 6, .group = 3, .h = 13, .w = 13, .stride = 2, .pad = 1},
      {.cin = 4, .cout = 4, .group = 4, .h = 15, .w = 15, .pad = 1},
      {.cin = 1, .cout = 3, .h = 7, .w = 7, .stride = 3, .pad = 1},
      {.cin = 3, .cout = 4, .h = 12, .w = 9, .stride = 2, .pad = 1, .dil = 2},
  };
  for (const ConvGeom& g : cases) {
    SCOPED_TRACE(::testing::Message()
                 << g.cin << "->" << g.cout << " @" << g.h << "x" << g.w << " k" << g.kh << " s"
                 << g.stride << " p" << g.pad << " g" << g.group << " d" << g.dil);
    run_guarded(g);
  }
}

}  // namespace
}  // namespace kiln::kernels::cpu
