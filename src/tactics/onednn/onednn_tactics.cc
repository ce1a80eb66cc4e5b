#include "tactics/onednn/onednn_tactics.h"

namespace kiln::tactics::onednn {

std::span<const Tactic* const> onednn_tactics() {
  // Winograd last: at optimization level 0 (no timing) the first applicable tactic is taken, and
  // Winograd's numbers differ from the direct convolution's by its transforms' rounding.
  static const Tactic* const tactics[] = {&conv_tactic(),
                                          &fused_conv_tactic(),
                                          &matmul_tactic(),
                                          &gemm_tactic(),
                                          &fused_gemm_tactic(),
                                          &conv_nchw16c_tactic(),
                                          &conv_winograd_tactic(),
                                          &fused_conv_winograd_tactic(),
                                          &conv_winograd_slices_tactic(),
                                          &fused_conv_winograd_slices_tactic(),
                                          &conv_nchw16c_winograd_tactic(),
                                          &qconv_nhwc_tactic(),
                                          &qconv_nhwc_jit_tactic()};
  return tactics;
}

}  // namespace kiln::tactics::onednn
