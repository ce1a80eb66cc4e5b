#pragma once
// The transforms of Winograd's F(m x m, 3 x 3) for m = 2, 3 and 4 at stride 1, and for m = 2 at
// stride 2 (the last specialization) (Lavin and Gray, "Fast Algorithms for Convolutional Neural
// Networks", 2015): Y = A^T [(G g G^T) . (B^T d B)] A for a 3x3 filter g and an alpha x alpha
// input tile d. Interpolation points 0, 1, -1 (m = 2), 0, 1, -1, 2 (m = 3) and 0, 1, -1, 2, -2
// (m = 4), and infinity; m = 3's by the Toom-Cook construction (A^T's columns the points' powers,
// G's rows the powers over prod (a_j - a_l), B^T's rows the products of (x - a_l) for l != j),
// checked exactly in rationals against the direct 2-D correlation. ISA-neutral: G transforms the
// weights at engine build (in double), B^T and A^T are applied by the kernels
// (kernels_winograd_impl.h) with compile-time coefficients.

namespace kiln::kernels::x86::winograd {

// S is the convolution's stride: alpha = (m - 1) S + 3 input pixels a side give m outputs.
template <int M, int S = 1>
struct Transforms;

template <>
struct Transforms<2> {
  static constexpr int kAlpha = 4;
  static constexpr float kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr float kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};

// 25 products for 9 outputs (0.31x of the direct multiplications, 0.25x at m = 4), and 25 / 9 of
// the weights in place of 36 / 9: on a 14 x 14 plane 25 tiles cover 15 x 15 where m = 4's 16 cover
// 16 x 16, so 8% more products than m = 4 with 30% fewer transformed weights to read.
template <>
struct Transforms<3> {
  static constexpr int kAlpha = 5;
  static constexpr float kBt[5][5] = {
      {2, -1, -2, 1, 0}, {0, -2, -1, 1, 0}, {0, 2, -3, 1, 0}, {0, -1, 0, 1, 0}, {0, 2, -1, -2, 1}};
  static constexpr double kG[5][3] = {{1.0 / 2, 0, 0},
                                      {-1.0 / 2, -1.0 / 2, -1.0 / 2},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 6, 1.0 / 3, 2.0 / 3},
                                      {0, 0, 1}};
  static constexpr float kAt[3][5] = {{1, 1, 1, 1, 0}, {0, 1, -1, 2, 0}, {0, 1, 1, 4, 1}};
};

template <>
struct Transforms<4> {
  static constexpr int kAlpha = 6;
  static constexpr float kBt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                      {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                      {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double kG[6][3] = {{1.0 / 4, 0, 0},
                                      {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                      {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                      {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                      {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                      {0, 0, 1}};
  static constexpr float kAt[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

// Stride 2, m = 2: y_i = g0 d_2i + g1 d_2i+1 + g2 d_2i+2 splits into a 2-tap correlation of the
// even inputs (d0, d2, d4) with (g0, g2), F(2, 2)'s 3 products, and the odd inputs (d1, d3) times
// g1, 2 products: 5 for 2 outputs, nested to 25 for 2 x 2 (0.69x the direct convolution's 36).
// Every coefficient is 0 or +-1, so the rounding error stays the direct kernel's.
template <>
struct Transforms<2, 2> {
  static constexpr int kAlpha = 5;
  static constexpr float kBt[5][5] = {
      {1, 0, -1, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, -1, 0, 1}, {0, 1, 0, 0, 0}, {0, 0, 0, 1, 0}};
  static constexpr double kG[5][3] = {{1, 0, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 0}, {0, 1, 0}};
  static constexpr float kAt[2][5] = {{1, 1, 0, 1, 0}, {0, 1, 1, 0, 1}};
};

}  // namespace kiln::kernels::x86::winograd
