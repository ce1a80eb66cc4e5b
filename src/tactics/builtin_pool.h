#pragma once
// What the pooling tactics share (builtin_pool.cc, x86/x86_qpool.cc): a pooling node's window.

#include <algorithm>
#include <functional>
#include <memory>

#include "kernels/cpu/pool.h"
#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

// The window as the shape function reads it (ceil_mode exists from opset 10), resolved for X's
// concrete dims (rank 3 or 4), with the output dims checked against Y.
Result<kernels::cpu::Pool2DParams> pool_params(const ir::Node& node, int since_version,
                                               const TensorView& x, const TensorView& y);

// Output rows a thread takes at least in an NCHW pooling (about 32K window taps).
inline int64_t pool_row_grain(const kernels::cpu::Pool2DParams& p) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.out_w * p.k_h * p.k_w));
}

// Why a MaxPool / AveragePool tactic of `dtype` (float32, or uint8 for a quantized MaxPool)
// cannot run the layer: the Indices output, another dtype, a rank other than 3 or 4; "" when it
// can.
std::string pool_why_not(const LayerSpec& spec, DType dtype);

// kiln.MaxPoolNchw16c's layer kernel over a rows function (kernels::cpu::max_pool_nchw16c's
// signature: the portable kernel's, or an ISA's in x86/x86_pool.cc), and why it cannot run a layer.
using BlockedMaxPoolRows =
    std::function<void(const kernels::cpu::Pool2DParams&, const float*, float*, int64_t, int64_t)>;
std::string blocked_max_pool_why_not(const LayerSpec& spec);
std::unique_ptr<LayerKernel> make_blocked_max_pool_kernel(const LayerSpec& spec,
                                                          BlockedMaxPoolRows rows);

}  // namespace kiln::tactics::builtin
