#include "kernels/cpu/elementwise.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/vec_util.h"

namespace kiln::kernels::cpu {
namespace {

template <typename F>
void map(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, so that the exponential never overflows.
inline float sigmoid(float v) {
  const float e = exp_f32(-std::fabs(v));
  const float r = 1.0f / (1.0f + e);
  return v >= 0.0f ? r : e * r;
}

}  // namespace

void unary(const UnaryParams& p, const float* x, float* y, int64_t n) {
  const float alpha = p.alpha;
  const float beta = p.beta;
  switch (p.kind) {
    case UnaryKind::kRelu:
      return map(x, y, n, [](float v) { return v < 0.0f ? 0.0f : v; });
    case UnaryKind::kSigmoid:
      return map(x, y, n, [](float v) { return sigmoid(v); });
    case UnaryKind::kTanh:
      return map(x, y, n, [](float v) { return std::tanh(v); });
    case UnaryKind::kExp:
      return map(x, y, n, [](float v) { return exp_f32(v); });
    case UnaryKind::kErf:
      return map(x, y, n, [](float v) { return std::erf(v); });
    case UnaryKind::kSqrt:
      return map(x, y, n, [](float v) { return std::sqrt(v); });
    case UnaryKind::kNeg:
      return map(x, y, n, [](float v) { return -v; });
    case UnaryKind::kAbs:
      return map(x, y, n, [](float v) { return std::fabs(v); });
    case UnaryKind::kHardSigmoid:
      return map(x, y, n, [=](float v) { return std::clamp(alpha * v + beta, 0.0f, 1.0f); });
    case UnaryKind::kHardSwish:
      return map(x, y, n,
                 [](float v) { return v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f)); });
    case UnaryKind::kLeakyRelu:
      return map(x, y, n, [=](float v) { return v < 0.0f ? alpha * v : v; });
    case UnaryKind::kClip:
      return map(x, y, n, [=](float v) {
        const float lo = v < alpha ? alpha : v;  // NaN compares false and stays
        return beta < lo ? beta : lo;
      });
    case UnaryKind::kSilu:
      return map(x, y, n, [](float v) { return v * sigmoid(v); });
    case UnaryKind::kGelu:
      return map(x, y, n, [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678f)); });
  }
}

void activate_unary(float* y, int64_t n, const void* ctx) {
  unary(*static_cast<const UnaryParams*>(ctx), y, y, n);
}

bool make_broadcast_plan(std::span<const int64_t> a, std::span<const int64_t> b,
                         std::span<const int64_t> out, BroadcastPlan& plan) {
  plan = BroadcastPlan{};
  const size_t r = out.size();
  bool a_bcast[kMaxBroadcastRank] = {};
  bool b_bcast[kMaxBroadcastRank] = {};
  for (size_t k = 0; k < r; ++k) {
    const int64_t od = out[k];
    if (od == 0) {  // empty output: one empty axis
      plan = BroadcastPlan{};
      plan.rank = 1;
      return true;
    }
    if (od == 1) continue;
    const bool ab = k < r - a.size() || a[k - (r - a.size())] == 1;
    const bool bb = k < r - b.size() || b[k - (r - b.size())] == 1;
    const int last = plan.rank - 1;
    if (plan.rank > 0 && a_bcast[last] == ab && b_bcast[last] == bb) {
      plan.dims[last] *= od;
      continue;
    }
    if (plan.rank == kMaxBroadcastRank) return false;
    plan.dims[plan.rank] = od;
    a_bcast[plan.rank] = ab;
    b_bcast[plan.rank] = bb;
    ++plan.rank;
  }
  if (plan.rank == 0) {  // a single element
    plan.rank = 1;
    plan.dims[0] = 1;
    return true;
  }
  int64_t sa = 1;
  int64_t sb = 1;
  for (int j = plan.rank - 1; j >= 0; --j) {
    plan.a_strides[j] = a_bcast[j] ? 0 : sa;
    plan.b_strides[j] = b_bcast[j] ? 0 : sb;
    if (!a_bcast[j]) sa *= plan.dims[j];
    if (!b_bcast[j]) sb *= plan.dims[j];
  }
  return true;
}

namespace {

template <BinaryKind K>
inline float apply(float a, float b) {
  if constexpr (K == BinaryKind::kAdd) return a + b;
  if constexpr (K == BinaryKind::kSub) return a - b;
  if constexpr (K == BinaryKind::kMul) return a * b;
  if constexpr (K == BinaryKind::kDiv) return a / b;
}

// One inner row; each input stride is 1 (present) or 0 (broadcast).
template <BinaryKind K>
void binary_row(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t n) {
  if (sa != 0 && sb != 0) {
    for (int64_t i = 0; i < n; ++i) y[i] = apply<K>(a[i], b[i]);
  } else if (sa != 0) {
    const float bv = b[0];
    for (int64_t i = 0; i < n; ++i) y[i] = apply<K>(a[i], bv);
  } else if (sb != 0) {
    const float av = a[0];
    for (int64_t i = 0; i < n; ++i) y[i] = apply<K>(av, b[i]);
  } else {
    std::fill(y, y + n, apply<K>(a[0], b[0]));
  }
}

template <BinaryKind K>
void binary_with(const BroadcastPlan& p, const float* a, const float* b, float* y) {
  const int inner_axis = p.rank - 1;
  const int64_t inner = p.dims[inner_axis];
  const int64_t sa = p.a_strides[inner_axis];
  const int64_t sb = p.b_strides[inner_axis];
  if (inner == 0) return;
  int64_t outer = 1;
  for (int k = 0; k < inner_axis; ++k) outer *= p.dims[k];
  int64_t coord[kMaxBroadcastRank] = {};
  int64_t oa = 0;
  int64_t ob = 0;
  for (int64_t o = 0; o < outer; ++o) {
    binary_row<K>(a + oa, sa, b + ob, sb, y + o * inner, inner);
    for (int k = inner_axis - 1; k >= 0; --k) {  // odometer over the outer axes
      oa += p.a_strides[k];
      ob += p.b_strides[k];
      if (++coord[k] < p.dims[k]) break;
      oa -= p.a_strides[k] * p.dims[k];
      ob -= p.b_strides[k] * p.dims[k];
      coord[k] = 0;
    }
  }
}

}  // namespace

void binary(BinaryKind kind, const BroadcastPlan& plan, const float* a, const float* b, float* y) {
  switch (kind) {
    case BinaryKind::kAdd:
      return binary_with<BinaryKind::kAdd>(plan, a, b, y);
    case BinaryKind::kSub:
      return binary_with<BinaryKind::kSub>(plan, a, b, y);
    case BinaryKind::kMul:
      return binary_with<BinaryKind::kMul>(plan, a, b, y);
    case BinaryKind::kDiv:
      return binary_with<BinaryKind::kDiv>(plan, a, b, y);
  }
}

}  // namespace kiln::kernels::cpu
