#include "kernels/ref/einsum.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

Result<EinsumTerm> parse_term(std::string_view text, std::string_view equation) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      term.letters.push_back(c);
    } else if (text.substr(i, 3) == "...") {
      if (term.has_ellipsis)
        return invalid_model("equation '{}': '{}' has two ellipses", equation, text);
      term.has_ellipsis = true;
      term.ellipsis_pos = term.letters.size();
      i += 2;
    } else {
      return invalid_model("equation '{}': unexpected character '{}' in '{}'", equation, c, text);
    }
  }
  return term;
}

// numpy's implicit output: the ellipsis (if any input has one), then the letters that appear
// exactly once, in alphabetical order.
EinsumTerm implicit_output(const std::vector<EinsumTerm>& inputs) {
  std::map<char, int> count;
  EinsumTerm out;
  for (const EinsumTerm& t : inputs) {
    for (char c : t.letters) ++count[c];
    out.has_ellipsis = out.has_ellipsis || t.has_ellipsis;
  }
  for (auto [c, n] : count) {
    if (n == 1) out.letters.push_back(c);
  }
  return out;
}

}  // namespace

Result<EinsumEquation> parse_einsum(std::string_view equation, size_t num_inputs) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq.push_back(c);
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  EinsumEquation result;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    KILN_ASSIGN_OR_RETURN(EinsumTerm term,
                          parse_term(std::string_view(lhs).substr(start, comma - start), equation));
    result.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (result.inputs.size() != num_inputs) {
    return invalid_model("equation '{}' has {} operand terms but the node has {} inputs", equation,
                         result.inputs.size(), num_inputs);
  }
  if (arrow == std::string::npos) {
    result.output = implicit_output(result.inputs);
    return result;
  }
  KILN_ASSIGN_OR_RETURN(result.output,
                        parse_term(std::string_view(eq).substr(arrow + 2), equation));
  for (size_t i = 0; i < result.output.letters.size(); ++i) {
    const char c = result.output.letters[i];
    if (result.output.letters.find(c, i + 1) != std::string::npos) {
      return invalid_model("equation '{}': output label '{}' appears twice", equation, c);
    }
    const bool in_inputs =
        std::any_of(result.inputs.begin(), result.inputs.end(),
                    [c](const EinsumTerm& t) { return t.letters.find(c) != std::string::npos; });
    if (!in_inputs) {
      return invalid_model("equation '{}': output label '{}' is not in any input", equation, c);
    }
  }
  return result;
}

namespace {

constexpr size_t kNumLetters = 52;
size_t letter_id(char c) {
  return std::islower(static_cast<unsigned char>(c)) ? static_cast<size_t>(c - 'a')
                                                     : 26 + static_cast<size_t>(c - 'A');
}

// Label ids of a term's dims in order: letters map to 0..51, ellipsis dim j (of `ell` dims,
// right-aligned against the widest ellipsis `max_ell`) to 52 + max_ell - ell + j.
std::vector<size_t> term_labels(const EinsumTerm& t, size_t ell, size_t max_ell) {
  std::vector<size_t> ids;
  for (size_t i = 0; i <= t.letters.size(); ++i) {
    if (t.has_ellipsis && i == t.ellipsis_pos) {
      for (size_t j = 0; j < ell; ++j) ids.push_back(kNumLetters + max_ell - ell + j);
    }
    if (i < t.letters.size()) ids.push_back(letter_id(t.letters[i]));
  }
  return ids;
}

}  // namespace

Result<EinsumPlan> plan_einsum(const EinsumEquation& eq, std::span<const std::vector<int64_t>> dims,
                               std::string_view equation) {
  std::vector<size_t> ell(eq.inputs.size(), 0);
  size_t max_ell = 0;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const EinsumTerm& t = eq.inputs[i];
    const size_t rank = dims[i].size();
    if (rank < t.letters.size() || (!t.has_ellipsis && rank != t.letters.size())) {
      return invalid_model("equation '{}': operand {} has rank {} but its term '{}{}' needs {}{}",
                           equation, i, rank, t.letters, t.has_ellipsis ? "..." : "",
                           t.letters.size(), t.has_ellipsis ? " or more" : "");
    }
    ell[i] = rank - t.letters.size();
    max_ell = std::max(max_ell, ell[i]);
  }
  // Size of every label: letters must agree up to 1s; ellipsis dims broadcast.
  std::vector<int64_t> size(kNumLetters + max_ell, -1);
  std::vector<std::vector<size_t>> labels(eq.inputs.size());
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    labels[i] = term_labels(eq.inputs[i], ell[i], max_ell);
    for (size_t d = 0; d < labels[i].size(); ++d) {
      int64_t& s = size[labels[i][d]];
      const int64_t got = dims[i][d];
      if (s == -1 || s == 1) {
        s = got;
      } else if (got != 1 && got != s) {
        return invalid_model("equation '{}': operand {} has size {} for a label of size {}",
                             equation, i, got, s);
      }
    }
  }
  EinsumPlan plan;
  std::vector<size_t> order = term_labels(eq.output, eq.output.has_ellipsis ? max_ell : 0, max_ell);
  plan.num_output_labels = order.size();
  for (size_t id = 0; id < size.size(); ++id) {
    if (size[id] >= 0 && std::find(order.begin(), order.end(), id) == order.end())
      order.push_back(id);
  }
  for (size_t id : order) plan.label_sizes.push_back(size[id]);
  for (size_t k = 0; k < plan.num_output_labels; ++k) plan.output_dims.push_back(size[order[k]]);
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    std::vector<int64_t> strides(order.size(), 0);
    int64_t stride = 1;
    for (size_t d = labels[i].size(); d-- > 0;) {
      const size_t pos =
          static_cast<size_t>(std::find(order.begin(), order.end(), labels[i][d]) - order.begin());
      if (dims[i][d] != 1 || size[labels[i][d]] == 1) strides[pos] += stride;
      stride *= dims[i][d];
    }
    plan.strides.push_back(std::move(strides));
  }
  return plan;
}

template <typename T>
void einsum(const EinsumPlan& plan, std::span<const T* const> operands, T* out) {
  const size_t num_labels = plan.label_sizes.size();
  int64_t out_count = 1;
  int64_t sum_count = 1;
  for (size_t k = 0; k < num_labels; ++k) {
    (k < plan.num_output_labels ? out_count : sum_count) *= plan.label_sizes[k];
  }
  std::vector<Acc<T>> acc(static_cast<size_t>(out_count), Acc<T>{0});
  std::vector<int64_t> coord(num_labels, 0);
  std::vector<int64_t> offset(operands.size(), 0);
  const int64_t total = out_count * sum_count;
  for (int64_t i = 0; i < total; ++i) {
    Acc<T> product{1};
    for (size_t o = 0; o < operands.size(); ++o) product *= to_acc(operands[o][offset[o]]);
    acc[static_cast<size_t>(i / sum_count)] += product;
    // Odometer step over all labels, keeping every operand's offset in step.
    for (size_t k = num_labels; k > 0; --k) {
      const size_t l = k - 1;
      if (++coord[l] < plan.label_sizes[l]) {
        for (size_t o = 0; o < operands.size(); ++o) offset[o] += plan.strides[o][l];
        break;
      }
      for (size_t o = 0; o < operands.size(); ++o) {
        offset[o] -= plan.strides[o][l] * (plan.label_sizes[l] - 1);
      }
      coord[l] = 0;
    }
  }
  for (size_t j = 0; j < acc.size(); ++j) out[j] = from_acc<T>(acc[j]);
}

#define KILN_INSTANTIATE(T) \
  template void einsum<T>(const EinsumPlan&, std::span<const T* const>, T*);
KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln::kernels::ref
