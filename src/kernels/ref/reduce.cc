#include "kernels/ref/reduce.h"

#include <cmath>
#include <limits>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// Stride of each input dim in the output (0 for reduced dims).
std::vector<int64_t> output_strides(const ReduceShape& s) {
  std::vector<int64_t> strides(s.dims.size(), 0);
  int64_t stride = 1;
  for (size_t k = s.dims.size(); k-- > 0;) {
    if (!s.reduced[k]) {
      strides[k] = stride;
      stride *= s.dims[k];
    }
  }
  return strides;
}

int64_t input_count(const ReduceShape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims) n *= d;
  return n;
}

// Calls fn(in_index, out_index) for every input element, in input order.
template <typename Fn>
void for_each_element(const ReduceShape& s, Fn&& fn) {
  const std::vector<int64_t> out_strides = output_strides(s);
  const int64_t total = input_count(s);
  const size_t rank = s.dims.size();
  std::vector<int64_t> coord(rank, 0);
  int64_t out = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, out);
    // Odometer step over the input coordinate, keeping the output index in step.
    for (size_t k = rank; k > 0; --k) {
      const size_t d = k - 1;
      if (++coord[d] < s.dims[d]) {
        out += out_strides[d];
        break;
      }
      out -= out_strides[d] * (s.dims[d] - 1);
      coord[d] = 0;
    }
  }
}

int64_t output_count(const ReduceShape& s) {
  int64_t n = 1;
  for (size_t k = 0; k < s.dims.size(); ++k) n *= s.reduced[k] ? 1 : s.dims[k];
  return n;
}

int64_t reduced_count(const ReduceShape& s) {
  int64_t n = 1;
  for (size_t k = 0; k < s.dims.size(); ++k) n *= s.reduced[k] ? s.dims[k] : 1;
  return n;
}

// Folds every output's inputs with `step(acc, x)`, starting from `init`.
template <typename A, typename T, typename Step>
std::vector<A> fold(const ReduceShape& s, const T* x, A init, Step&& step) {
  std::vector<A> acc(static_cast<size_t>(output_count(s)), init);
  for_each_element(s, [&](int64_t i, int64_t o) {
    A& a = acc[static_cast<size_t>(o)];
    a = step(a, x[i]);
  });
  return acc;
}

// log(sum(exp(x))) with the maximum factored out, so large inputs do not overflow.
template <typename T>
std::vector<double> log_sum_exp(const ReduceShape& s, const T* x) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> max =
      fold(s, x, -inf, [](double a, T v) { return std::max(a, to_double(v)); });
  std::vector<double> sum(max.size(), 0.0);
  for_each_element(s, [&](int64_t i, int64_t o) {
    const double m = max[static_cast<size_t>(o)];
    if (std::isfinite(m)) sum[static_cast<size_t>(o)] += std::exp(to_double(x[i]) - m);
  });
  for (size_t o = 0; o < sum.size(); ++o) {
    sum[o] = std::isfinite(max[o]) ? max[o] + std::log(sum[o]) : max[o];
  }
  return sum;
}

template <typename T>
std::vector<double> reduce_in_double(ReduceKind kind, const ReduceShape& s, const T* x) {
  if (kind == ReduceKind::kLogSumExp) return log_sum_exp(s, x);
  std::vector<double> acc = fold(s, x, 0.0, [kind](double a, T v) {
    const double d = to_double(v);
    return a + (kind == ReduceKind::kL2 ? d * d : d);
  });
  for (double& a : acc) a = kind == ReduceKind::kL2 ? std::sqrt(a) : std::log(a);
  return acc;
}

template <typename T>
std::vector<Acc<T>> reduce_in_acc(ReduceKind kind, const ReduceShape& s, const T* x) {
  using A = Acc<T>;
  switch (kind) {
    case ReduceKind::kMax:
      return fold(s, x, to_acc(lowest_value<T>()), [](A a, T v) { return std::max(a, to_acc(v)); });
    case ReduceKind::kMin:
      return fold(s, x, to_acc(highest_value<T>()),
                  [](A a, T v) { return std::min(a, to_acc(v)); });
    case ReduceKind::kProd:
      return fold(s, x, A{1}, [](A a, T v) { return a * to_acc(v); });
    case ReduceKind::kL1:
      return fold(s, x, A{0}, [](A a, T v) {
        const A d = to_acc(v);
        if constexpr (std::is_signed_v<A>) return a + (d < 0 ? -d : d);
        return a + d;
      });
    case ReduceKind::kSumSquare:
      return fold(s, x, A{0}, [](A a, T v) { return a + to_acc(v) * to_acc(v); });
    default:  // kSum, kMean
      return fold(s, x, A{0}, [](A a, T v) { return a + to_acc(v); });
  }
}

}  // namespace

template <typename T>
void reduce(ReduceKind kind, const ReduceShape& s, const T* x, T* y) {
  if (kind == ReduceKind::kL2 || kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp) {
    const std::vector<double> r = reduce_in_double(kind, s, x);
    for (size_t o = 0; o < r.size(); ++o) y[o] = from_acc<T>(r[o]);
    return;
  }
  const std::vector<Acc<T>> r = reduce_in_acc(kind, s, x);
  const int64_t count = reduced_count(s);
  for (size_t o = 0; o < r.size(); ++o) {
    if (kind != ReduceKind::kMean) {
      y[o] = from_acc<T>(r[o]);
    } else if constexpr (kIsFloat<T>) {
      y[o] = from_acc<T>(r[o] / static_cast<double>(count));
    } else {
      y[o] = from_acc<T>(count == 0 ? Acc<T>{0} : r[o] / static_cast<Acc<T>>(count));
    }
  }
}

template <typename T>
void arg_reduce(const ArgReduceParams& p, const T* x, int64_t* y) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) {
      const T* row = x + o * p.n * p.inner + i;
      int64_t best = 0;
      Acc<T> best_value = to_acc(row[0]);
      for (int64_t j = 1; j < p.n; ++j) {
        const Acc<T> v = to_acc(row[j * p.inner]);
        const bool better = p.is_max ? v > best_value : v < best_value;
        if (better || (p.select_last && v == best_value)) {
          best = j;
          best_value = v;
        }
      }
      y[o * p.inner + i] = best;
    }
  }
}

#define KILN_INSTANTIATE(T)                                              \
  template void reduce<T>(ReduceKind, const ReduceShape&, const T*, T*); \
  template void arg_reduce<T>(const ArgReduceParams&, const T*, int64_t*);
KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln::kernels::ref
