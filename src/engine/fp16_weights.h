#pragma once
// The builder's FP16 step (--fp16, or --best after the INT8 step): convolutions and GEMMs whose
// weights are a constant float32 tensor become FP16 layers, as TensorRT's --fp16 makes them on a
// GPU, within what this CPU can do: it converts binary16 <-> float32 (F16C) but has no binary16
// arithmetic. So the weights are rounded to binary16 — in the graph they stay float32 tensors
// holding binary16 values, which every tactic runs unchanged with the same numerics — and the
// engine file stores them as binary16 (half the bytes); tactics with an FP16 path (the x86 GEMM's
// *.f16w.*) keep them as binary16 in memory too. Activations, biases and accumulation stay
// float32.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "ir/graph.h"

namespace kiln::engine {

// True for the ops that have FP16 weights: Conv, Gemm, MatMul, kiln.FusedConv, kiln.FusedGemm.
bool is_fp16_candidate(const ir::Node& node);

// Rounds the weights (input 1) of every candidate to binary16 unless --layerPrecisions keeps the
// layer fp32 (under prefer or obey), or the weights are not a float32 constant, or another layer
// that stays fp32 shares them. Adds the FP16 layers' names to `fp16_layers` and a note per
// candidate to `notes`; logs the decisions. Fails when obey cannot be met.
Status lower_fp16(ir::Graph& graph, const BuildOptions& options,
                  std::map<std::string, std::string>& notes, std::set<std::string>& fp16_layers,
                  std::vector<std::string>& log);

}  // namespace kiln::engine
