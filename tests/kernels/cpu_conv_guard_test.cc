// The portable direct convolution (kernels/cpu/conv.cc) reads nothing past its buffers: each
// buffer ends where an unmapped page begins, so a read one float too far crashes the test. GCC 12
// at -O3 once vectorized the kernel-column loop into loads one input channel past the padded
// image's last, which crashed `kiln build` on a 3-channel stride-2 stem only when the scratch
// happened to end at a page boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/cpu/conv.h"
#include "kernels/guarded_floats.h"

namespace kiln::kernels::cpu {
namespace {

using testing::GuardedFloats;

struct Geom {
  int64_t c, k, hw, kernel, stride, pad, group;
};

// y through guarded buffers against y through ordinary ones: the same values, and no crash.
void run_guarded(const Geom& g) {
  Conv2DParams p;
  p.in_c = g.c;
  p.out_c = g.k;
  p.group = g.group;
  p.in_h = p.in_w = g.hw;
  p.k_h = p.k_w = g.kernel;
  p.stride_h = p.stride_w = g.stride;
  p.pad_top = p.pad_left = g.pad;
  p.out_h = p.out_w = (g.hw + 2 * g.pad - g.kernel) / g.stride + 1;
  const size_t nx = static_cast<size_t>(g.c * g.hw * g.hw);
  const size_t nw = static_cast<size_t>(g.k * (g.c / g.group) * g.kernel * g.kernel);
  const size_t ny = static_cast<size_t>(g.k * p.out_h * p.out_w);
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
  const Geom cases[] = {
      {3, 32, 224, 3, 2, 1, 1},  // MobileNetV2's and EfficientNet-B0's stem: the one that crashed
      {3, 8, 10, 3, 2, 1, 1},   {2, 4, 16, 3, 2, 1, 1}, {5, 4, 12, 3, 2, 1, 1},
      {3, 5, 9, 3, 1, 1, 1},    {4, 4, 9, 3, 1, 0, 1},  {3, 6, 11, 5, 2, 2, 1},
      {6, 6, 13, 3, 2, 1, 3},   {4, 4, 15, 3, 1, 1, 4}, {1, 3, 7, 3, 3, 1, 1},
  };
  for (const Geom& g : cases) {
    SCOPED_TRACE(::testing::Message() << g.c << "->" << g.k << " @" << g.hw << " k" << g.kernel
                                      << " s" << g.stride << " p" << g.pad << " g" << g.group);
    run_guarded(g);
  }
}

}  // namespace
}  // namespace kiln::kernels::cpu
