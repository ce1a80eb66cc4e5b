#pragma once
// The transforms of Winograd's F(m x m, 3 x 3) for m = 2 and 4 (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2015): Y = A^T [(G g G^T) . (B^T d B)] A for a 3x3 filter g
// and an (m + 2) x (m + 2) input tile d. Interpolation points 0, 1, -1 (m = 2) and 0, 1, -1, 2, -2
// (m = 4), and infinity. ISA-neutral: G transforms the weights at engine build (in double), B^T
// and A^T are applied by the kernels (kernels_winograd_impl.h) with compile-time coefficients.

namespace kiln::kernels::x86::winograd {

template <int M>
struct Transforms;

template <>
struct Transforms<2> {
  static constexpr int kAlpha = 4;
  static constexpr float kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr float kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
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

}  // namespace kiln::kernels::x86::winograd
