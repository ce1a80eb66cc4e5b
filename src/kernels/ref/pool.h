#pragma once
// Reference pooling over any number of spatial dimensions.
//
// Layout: X [batch, channels, D1..Dk] and Y [batch, channels, O1..Ok], row-major (NCHW
// generalised). Window of output position o along dim i covers input coordinates
//   o * stride - pad_begin + k * dilation,  k in [0, kernel)
// Coordinates outside [0, D) are padding: ignored by max and Lp pooling; for average pooling they
// count towards the divisor only with count_include_pad, and then only those inside
// [-pad_begin, D + pad_end) (a ceil_mode window may reach beyond the padding; those never count).
// Global pooling is the special case kernel == input dims.

#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

struct PoolParams {
  int64_t batch = 1;
  int64_t channels = 1;
  std::vector<int64_t> in_dims;    // D1..Dk
  std::vector<int64_t> out_dims;   // O1..Ok
  std::vector<int64_t> kernel;     // K1..Kk
  std::vector<int64_t> strides;    // >= 1
  std::vector<int64_t> dilations;  // >= 1
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
};

// Max over each window. When `indices` is not null it receives, per output, the flat index of the
// (first) maximum in X including the batch and channel offsets, the spatial part row-major, or
// column-major (first spatial dim fastest) when `column_major_indices` (MaxPool storage_order = 1).
// A window lying entirely in the padding yields the lowest value of T and index -1.
// T: float, double, int8_t, uint8_t.
template <typename T>
void max_pool(const PoolParams& p, const T* x, T* y, int64_t* indices, bool column_major_indices);

// Mean over each window. T: float, double.
template <typename T>
void average_pool(const PoolParams& p, bool count_include_pad, const T* x, T* y);

// (sum |x|^p)^(1/p) over each window. T: float, double.
template <typename T>
void lp_pool(const PoolParams& p, double norm_p, const T* x, T* y);

}  // namespace kiln::kernels::ref
