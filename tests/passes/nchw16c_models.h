#pragma once
// Small models the blocked-layout pass tests share (nchw16c_layout, nchw16c_scale_fusion).

#include <gtest/gtest.h>

#include <string>

#include "base/cpu_features.h"
#include "fusion_test_util.h"

// The layout passes leave graphs alone where kiln's kernels cannot run (KILN_MAX_ISA below AVX2).
#define KILN_REQUIRE_BLOCKED_KERNELS()                                                 \
  do {                                                                                 \
    if ((host_cpu_features() & kIsaAvx2) != kIsaAvx2) GTEST_SKIP() << "no AVX2 + FMA"; \
  } while (0)

namespace kiln::testing {

// A 1x1 convolution `from` -> `to` with cin -> cout channels.
inline void pointwise(OnnxBuilder& b, const std::string& name, const std::string& from,
                      const std::string& to, int64_t cin, int64_t cout) {
  b.initializer("w_" + name, {cout, cin, 1, 1}, weights(cin * cout, 0.1f));
  b.node("Conv", {from, "w_" + name}, {to}, name);
}

// EfficientNet's squeeze-and-excitation after a depthwise convolution, up to the scaled tensor m:
// x [batch, 20, 6, 7] -> depthwise 3x3 "dw" -> d; GlobalAveragePool(d) -> 1x1 "fc1" -> Relu ->
// 1x1 "fc2" -> Sigmoid -> s; Mul(s, d) "scale" -> m. The batch is dynamic, as exporters write it.
inline OnnxBuilder squeeze_excitation_model() {
  OnnxBuilder b;
  b.input("x", 1, {-1, 20, 6, 7}, {"batch", "", "", ""});
  b.initializer("wd", {20, 1, 3, 3}, weights(180));
  auto& dw = b.node("Conv", {"x", "wd"}, {"d"}, "dw");
  set_attr_int(dw, "group", 20);
  set_attr_ints(dw, "pads", {1, 1, 1, 1});
  b.node("GlobalAveragePool", {"d"}, {"g"}, "pool");
  pointwise(b, "fc1", "g", "f1", 20, 8);
  b.node("Relu", {"f1"}, {"r1"}, "relu");
  pointwise(b, "fc2", "r1", "f2", 8, 20);
  b.node("Sigmoid", {"f2"}, {"s"}, "sigmoid");
  b.node("Mul", {"s", "d"}, {"m"}, "scale");
  return b;
}

}  // namespace kiln::testing
