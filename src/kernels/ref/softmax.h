#pragma once
// Reference Softmax, LogSoftmax and Hardmax over the middle dim of an [outer, axis, inner] view.

#include <cstdint>

namespace kiln::kernels::ref {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// The input viewed as [outer, n, inner]; the op normalises along n. Opset < 13 semantics (flatten
// to 2-D at `axis`) are inner = 1, n = product of the dims from axis on.
struct SoftmaxShape {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
};

// Softmax and LogSoftmax subtract the maximum first (exact for large inputs) and sum in double.
// Hardmax writes 1 at the first maximum along n and 0 elsewhere.
template <typename T>
void softmax(SoftmaxKind kind, const SoftmaxShape& shape, const T* x, T* y);

}  // namespace kiln::kernels::ref
