#include "tactics/builtin.h"

namespace kiln::tactics::builtin {

std::span<const Tactic* const> builtin_tactics() {
  static const std::vector<const Tactic*> tactics = [] {
    std::vector<const Tactic*> v;
    append_conv_tactics(v);
    append_gemm_tactics(v);
    append_pool_tactics(v);
    append_eltwise_tactics(v);
    append_norm_tactics(v);
    append_movement_tactics(v);
    append_layout_tactics(v);
    append_resize_tactics(v);
    append_fused_tactics(v);
    append_quant_tactics(v);
    return v;
  }();
  return tactics;
}

}  // namespace kiln::tactics::builtin
