#include "tactics/onednn/onednn_tactics.h"

namespace kiln::tactics::onednn {

std::span<const Tactic* const> onednn_tactics() {
  static const Tactic* const tactics[] = {&conv_tactic(), &fused_conv_tactic(), &matmul_tactic(),
                                          &gemm_tactic(), &fused_gemm_tactic()};
  return tactics;
}

}  // namespace kiln::tactics::onednn
