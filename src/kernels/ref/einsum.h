#pragma once
// Reference Einsum: equation parsing (numpy syntax with '...' ellipsis, implicit and explicit
// output) and a general evaluator that iterates the output and summed index spaces.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::kernels::ref {

// One operand's or the output's subscripts: letters in order, with the ellipsis (if any) at
// `ellipsis_pos` letters from the left.
struct EinsumTerm {
  std::string letters;
  bool has_ellipsis = false;
  size_t ellipsis_pos = 0;
};

struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  EinsumTerm output;  // derived numpy-style for an implicit equation
};

// Parses `equation` for `num_inputs` operands. Errors (invalid_model, message without node context)
// quote the equation.
Result<EinsumEquation> parse_einsum(std::string_view equation, size_t num_inputs);

// A resolved evaluation: every label (output labels first, then summed ones) with its size, and
// each operand's element stride per label (0 where the operand lacks or broadcasts the label;
// repeated labels in one operand add their strides, which walks the diagonal).
struct EinsumPlan {
  std::vector<int64_t> label_sizes;
  size_t num_output_labels = 0;
  std::vector<std::vector<int64_t>> strides;  // [operand][label]
  std::vector<int64_t> output_dims;
};

// Binds the equation to concrete operand dims. Sizes of a letter must agree across operands (or be
// 1, which broadcasts); ellipsis dims broadcast numpy-style. Ellipsis dims missing from an explicit
// output are summed.
Result<EinsumPlan> plan_einsum(const EinsumEquation& eq, std::span<const std::vector<int64_t>> dims,
                               std::string_view equation);

// out[output labels] = sum over summed labels of prod_i operand_i[...]; floating types accumulate
// in double, integers in 64 bits.
template <typename T>
void einsum(const EinsumPlan& plan, std::span<const T* const> operands, T* out);

}  // namespace kiln::kernels::ref
