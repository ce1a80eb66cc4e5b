#pragma once
// Runs one builtin tactic on a one-node graph and compares it with the reference executor: the
// harness every tests/kernels/*_test.cc goes through. The tactic is instantiated from the same
// LayerSpec an engine would build (node, descs, constants), reshaped, and run twice into output
// buffers pre-filled with NaN (so an element the kernel forgets to write shows up), the second run
// under an AllocCounter that must see no allocation.

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "tactics/tactic.h"
#include "testing/op_runner.h"
#include "testing/tensor_compare.h"

namespace kiln::testing {

// Conv and GEMM sum hundreds of float products (the reference sums in double).
inline constexpr Tolerance kSumTol{1e-5, 2e-5};
// Element-wise, normalisation and movement results.
inline constexpr Tolerance kPointTol{1e-5, 1e-6};

// The spec of a one-node graph's node.
tactics::LayerSpec layer_spec(const ir::Graph& g);

struct TacticRun {
  std::vector<Tensor> outputs;
  int64_t run_allocations = 0;  // heap allocations during the second run()
  double run_ms = 0;            // wall time of the second run()
};

// Fails (with the tactic's reason) when why_not() refuses the case.
Result<TacticRun> run_tactic(const std::string& tactic, const OpCase& c);

// Reshapes and runs a kernel made for og's node on og's inputs followed by `extra_inputs` (inputs
// the node does not have, such as a fused residual), as run_tactic does.
Result<TacticRun> run_layer_kernel(tactics::LayerKernel& kernel, const OpGraph& og,
                                   const std::vector<Tensor>& extra_inputs = {});

// The tactic accepts the case, its outputs match the reference within `tol`, run() allocates
// nothing (at most `max_run_allocations`: for a library that allocates bookkeeping per call).
void expect_matches_reference(const std::string& tactic, const OpCase& c, Tolerance tol,
                              int64_t max_run_allocations = 0);

// The tactic refuses the case with a reason containing `fragment`.
void expect_rejected(const std::string& tactic, const OpCase& c, const std::string& fragment);

// --- building cases ------------------------------------------------------------------------------

// Uniform in [-1, 1), deterministic in (dims, seed).
Tensor random_f32(const Dims& dims, uint64_t seed);

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string, ir::AttrValue>> list) {
  ir::Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}
using Ints = std::vector<int64_t>;
inline OpInput in(Tensor t) { return OpInput{std::move(t), false}; }
inline OpInput constant(Tensor t) { return OpInput{std::move(t), true}; }
inline OpInput absent() { return OpInput{std::nullopt, false}; }

// "[1x3x5x5]" etc., for SCOPED_TRACE.
std::string case_text(const OpCase& c);

}  // namespace kiln::testing
