#pragma once
// Integer division helpers shared by the shape functions and the kernels' planners (one copy, so
// that unity batches do not meet several file-local ones). Rounding is mathematical (toward
// minus or plus infinity) for either sign of a, which window arithmetic needs; b != 0.

#include <cstdint>

namespace kiln {

constexpr int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
constexpr int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
// The smallest multiple of b (> 0) that is >= a.
constexpr int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

static_assert(ceil_div(7, 4) == 2 && ceil_div(8, 4) == 2 && ceil_div(0, 4) == 0);
static_assert(ceil_div(-7, 4) == -1 && floor_div(-7, 4) == -2 && round_up(65, 64) == 128);

}  // namespace kiln
