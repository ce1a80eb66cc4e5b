#pragma once
// The builtin tactic source: portable kernels (kernels/cpu) for the ops that dominate the model
// set, float32 and INT8. One file per op family (builtin_<family>.cc) appends its tactics in
// preference order.

#include <span>
#include <vector>

#include "tactics/tactic.h"

namespace kiln::tactics::builtin {

// Every builtin tactic, in preference order per op (all_tactics() puts them before ref.generic).
std::span<const Tactic* const> builtin_tactics();

void append_conv_tactics(std::vector<const Tactic*>& out);      // builtin_conv.cc
void append_gemm_tactics(std::vector<const Tactic*>& out);      // builtin_gemm.cc
void append_pool_tactics(std::vector<const Tactic*>& out);      // builtin_pool.cc
void append_eltwise_tactics(std::vector<const Tactic*>& out);   // builtin_eltwise.cc
void append_norm_tactics(std::vector<const Tactic*>& out);      // builtin_norm.cc
void append_movement_tactics(std::vector<const Tactic*>& out);  // builtin_movement.cc
void append_layout_tactics(std::vector<const Tactic*>& out);    // builtin_layout.cc
void append_resize_tactics(std::vector<const Tactic*>& out);    // builtin_resize.cc
void append_fused_tactics(std::vector<const Tactic*>& out);     // builtin_fused.cc
void append_quant_tactics(std::vector<const Tactic*>& out);     // builtin_quant.cc

}  // namespace kiln::tactics::builtin
