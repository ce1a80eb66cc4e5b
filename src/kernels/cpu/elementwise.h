#pragma once
// Element-wise float32 kernels: unary math and activations, and Add/Sub/Mul/Div with numpy
// broadcasting. Broadcasting is planned once per shape (make_broadcast_plan): the dims are
// collapsed into the fewest axes on which each input is either fully present or broadcast, so that
// per-channel, scalar and equal-shape operands all run as plain inner loops over contiguous data.

#include <cstddef>
#include <cstdint>
#include <span>

namespace kiln::kernels::cpu {

enum class UnaryKind {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kErf,
  kSqrt,
  kNeg,
  kAbs,
  kHardSigmoid,  // max(0, min(1, alpha * x + beta)); NaN stays NaN
  kHardSwish,    // x * max(0, min(1, x / 6 + 0.5))
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kClip,         // min(max(x, alpha), beta); NaN stays NaN
  kSilu,         // x * sigmoid(x): no ONNX op, the activation of fused Sigmoid + Mul
  kGelu,         // 0.5 * x * (1 + erf(x / sqrt(2))), the exact (not tanh) form
};

struct UnaryParams {
  UnaryKind kind = UnaryKind::kRelu;
  float alpha = 0.0f;
  float beta = 0.0f;
};

// y[i] = op(x[i]); x may equal y.
void unary(const UnaryParams& p, const float* x, float* y, int64_t n);
// The same in place, as an epilogue activation (epilogue.h): ctx is a const UnaryParams*.
void activate_unary(float* y, int64_t n, const void* ctx);

enum class BinaryKind { kAdd, kSub, kMul, kDiv };

// The largest rank a broadcast plan handles after collapsing (callers check the output rank).
inline constexpr int kMaxBroadcastRank = 8;

// out[i] = a[a_offset(i)] op b[b_offset(i)] over `dims` (row-major), each stride 0 where that input
// is broadcast.
struct BroadcastPlan {
  int rank = 0;
  int64_t dims[kMaxBroadcastRank] = {};
  int64_t a_strides[kMaxBroadcastRank] = {};
  int64_t b_strides[kMaxBroadcastRank] = {};
};

// False when the collapsed rank exceeds kMaxBroadcastRank. Input dims must broadcast to `out`.
bool make_broadcast_plan(std::span<const int64_t> a, std::span<const int64_t> b,
                         std::span<const int64_t> out, BroadcastPlan& plan);

void binary(BinaryKind kind, const BroadcastPlan& plan, const float* a, const float* b, float* y);

}  // namespace kiln::kernels::cpu
