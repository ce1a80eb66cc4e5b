#pragma once
// Reference normalization kernels. X is row-major; statistics are computed in double.
//
// Shapes are passed flattened:
//   batch_norm:    X [batch, params, inner]; scale/bias/mean/var [params]. For ONNX this is
//                  params = C, inner = D1*...*Dk (or params = C*D1*..*Dk, inner = 1 for opset-7
//                  BatchNormalization with spatial = 0).
//   instance_norm: X [batch, channels, inner]; statistics per (n, c) over inner; scale/bias
//   [channels]. layer_norm:    X [outer, inner]; statistics per row; scale/bias [inner] (already
//   broadcast);
//                  mean/inv_std_dev [outer] are optional outputs (nullptr to skip).
//   lrn:           X [batch, channels, inner]; across-channel local response normalization.
// T is float or double.

#include <cstdint>

namespace kiln::kernels::ref {

// y = scale * (x - mean) / sqrt(var + epsilon) + bias
template <typename T>
void batch_norm(int64_t batch, int64_t params, int64_t inner, const T* x, const double* scale,
                const double* bias, const double* mean, const double* var, double epsilon, T* y);

// y = scale[c] * (x - mean(x[n,c,:])) / sqrt(var(x[n,c,:]) + epsilon) + bias[c]
template <typename T>
void instance_norm(int64_t batch, int64_t channels, int64_t inner, const T* x, const double* scale,
                   const double* bias, double epsilon, T* y);

// y = (x - mean(row)) * inv_std_dev(row) * scale + bias, inv_std_dev = 1 / sqrt(var(row) +
// epsilon). bias may be nullptr.
template <typename T>
void layer_norm(int64_t outer, int64_t inner, const T* x, const double* scale, const double* bias,
                double epsilon, T* y, double* mean, double* inv_std_dev);

// y[c] = x[c] / (bias + alpha / size * sum_{c' in window(c)} x[c']^2) ^ beta, the window being
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] clipped to the channels.
template <typename T>
void lrn(int64_t batch, int64_t channels, int64_t inner, int64_t size, double alpha, double beta,
         double bias, const T* x, T* y);

}  // namespace kiln::kernels::ref
