#pragma once
// Runs one pass on a small model built with OnnxBuilder and checks that the graph still computes
// the same outputs. Every pass test goes through here, so "structure changed as intended" and
// "results unchanged" are always checked together.

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"
#include "runtime/input_check.h"
#include "testing/onnx_builder.h"
#include "testing/tensor_compare.h"

namespace kiln::testing {

// Imports the builder's model (with shape inference), as the builder would see it.
ir::Graph import_model(const OnnxBuilder& builder);

struct PassResult {
  ir::Graph before;
  ir::Graph after;
  passes::PassLog log;
};

// Imports, runs `pass` (which must succeed), verifies the graph and re-runs shape inference.
PassResult run_pass(const OnnxBuilder& builder, const passes::PassDef& pass);

// Op types of the graph's nodes in order, e.g. {"Conv", "Relu"}; domain-qualified for non-ONNX
// domains ("kiln.FusedConv").
std::vector<std::string> op_types(const ir::Graph& graph);

// Runs both graphs with the reference executor on the same inputs (random, seeded, for every graph
// input not given) and expects every output to match within `tol`.
void expect_same_outputs(const ir::Graph& before, const ir::Graph& after,
                         runtime::NamedTensors inputs = {}, Tolerance tol = {1e-5, 1e-6});

}  // namespace kiln::testing
