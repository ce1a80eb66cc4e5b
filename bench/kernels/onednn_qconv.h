#pragma once
// A peer for the suite's INT8 convolutions (kiln.QConv, one group): oneDNN's int8 convolution on
// NHWC uint8, with kiln.QConv's epilogue (per-channel weight scales, float bias, ReLU, uint8
// out). NHWC is the layout oneDNN's fast int8 kernels (brgconv, jit x8s8s32x) take; on NCHW it
// falls back to a reference loop. kiln's INT8 tensors are NCHW, so this times what a oneDNN INT8
// tactic on an NHWC engine would cost, without the reorders an NCHW engine would add around it:
// the question it answers is whether such an engine would pay.

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace kiln::bench {

class OnednnQConv {
 public:
  // The layer of `g` (one kiln.QConv node) with `threads` OpenMP threads, its weights reordered
  // into the primitive's layout and its input (NCHW, as kiln's) into NHWC; not timed.
  static Result<std::unique_ptr<OnednnQConv>> make(const ir::Graph& g, const uint8_t* x_nchw,
                                                   int threads);
  ~OnednnQConv();
  OnednnQConv(const OnednnQConv&) = delete;
  OnednnQConv& operator=(const OnednnQConv&) = delete;

  // The implementation oneDNN chose ("brgconv:avx512_core_vnni").
  std::string impl() const;
  // One convolution: the timed part.
  void run();
  // The last run's output, NCHW.
  std::vector<uint8_t> output_nchw();

 private:
  struct State;
  explicit OnednnQConv(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

}  // namespace kiln::bench
