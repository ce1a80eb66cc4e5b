#include "kernels/ref/rnn.h"

#include <algorithm>
#include <cmath>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

double activate(const RnnActivation& a, double v) {
  const double alpha = a.alpha;
  const double beta = a.beta;
  switch (a.kind) {
    case RnnActivationKind::kRelu:
      return v < 0 ? 0.0 : v;  // NaN stays NaN, as the Relu op (std::max would give 0)
    case RnnActivationKind::kTanh:
      return std::tanh(v);
    case RnnActivationKind::kSigmoid:
      return v >= 0 ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v) / (1.0 + std::exp(v));
    case RnnActivationKind::kAffine:
      return alpha * v + beta;
    case RnnActivationKind::kLeakyRelu:
      return v < 0 ? alpha * v : v;
    case RnnActivationKind::kThresholdedRelu:
      return v > alpha ? v : 0.0;
    case RnnActivationKind::kScaledTanh:
      return alpha * std::tanh(beta * v);
    case RnnActivationKind::kHardSigmoid:
      return std::clamp(alpha * v + beta, 0.0, 1.0);  // NaN stays NaN, as the HardSigmoid op
    case RnnActivationKind::kElu:
      return v < 0 ? alpha * std::expm1(v) : v;
    case RnnActivationKind::kSoftsign:
      return v / (1.0 + std::fabs(v));
    case RnnActivationKind::kSoftplus:
      return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
  }
  return v;
}

int gate_count(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn:
      return 1;
    case RnnCell::kGru:
      return 3;
    case RnnCell::kLstm:
      return 4;
  }
  return 1;
}

// f (RNN); f, g (GRU); f, g, h (LSTM).
int activations_per_direction(RnnCell cell) {
  switch (cell) {
    case RnnCell::kRnn:
      return 1;
    case RnnCell::kGru:
      return 2;
    case RnnCell::kLstm:
      return 3;
  }
  return 1;
}

// Flat offsets of the layout-dependent tensors.
struct Layout {
  const RnnParams& p;
  int64_t x(int64_t t, int64_t b) const {
    return (p.batch_major ? b * p.seq_length + t : t * p.batch + b) * p.input_size;
  }
  int64_t y(int64_t t, int d, int64_t b) const {
    return (p.batch_major ? (b * p.seq_length + t) * p.num_directions + d
                          : (t * p.num_directions + d) * p.batch + b) *
           p.hidden_size;
  }
  int64_t state(int d, int64_t b) const {
    return (p.batch_major ? b * p.num_directions + d : d * p.batch + b) * p.hidden_size;
  }
};

template <typename T>
std::vector<double> to_doubles(const T* src, int64_t offset, int64_t n) {
  std::vector<double> v(static_cast<size_t>(n), 0.0);
  if (src != nullptr) {
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = to_double(src[offset + i]);
  }
  return v;
}

// One direction's weights in double: W [G*H, I], R [G*H, H], biases [G*H], peepholes [3*H].
struct Weights {
  std::vector<double> w, r, wb, rb, peep;
  std::vector<RnnActivation> act;  // f (, g (, h))
};

template <typename T>
Weights direction_weights(const RnnParams& p, const RnnInputs<T>& in, int d) {
  const int64_t gh = gate_count(p.cell) * p.hidden_size;
  Weights w;
  w.w = to_doubles(in.w, d * gh * p.input_size, gh * p.input_size);
  w.r = to_doubles(in.r, d * gh * p.hidden_size, gh * p.hidden_size);
  w.wb = to_doubles(in.b, d * 2 * gh, gh);
  w.rb = to_doubles(in.b, d * 2 * gh + gh, gh);
  if (p.cell == RnnCell::kLstm) w.peep = to_doubles(in.p, d * 3 * p.hidden_size, 3 * p.hidden_size);
  const int k = activations_per_direction(p.cell);
  w.act.assign(p.activations.begin() + d * k, p.activations.begin() + (d + 1) * k);
  return w;
}

// out[j] = bias[j] + sum_k m[j, k] * v[k] for j < rows.
void affine(const std::vector<double>& m, const std::vector<double>& bias, int64_t rows,
            int64_t cols, const double* v, double* out) {
  for (int64_t j = 0; j < rows; ++j) {
    double s = bias[static_cast<size_t>(j)];
    const double* row = m.data() + j * cols;
    for (int64_t k = 0; k < cols; ++k) s += row[k] * v[k];
    out[j] = s;
  }
}

double clip(const RnnParams& p, double v) {
  return p.clip > 0 ? std::clamp(v, -static_cast<double>(p.clip), static_cast<double>(p.clip)) : v;
}

// The recurrent state of one batch entry in one direction.
struct State {
  std::vector<double> h, c;
};

// xw = W x_t + Wb and hr = R h + Rb (both [G*H]) are given; updates the state.
void rnn_step(const RnnParams& p, const Weights& w, const double* xw, const double* hr, State& s) {
  for (int64_t j = 0; j < p.hidden_size; ++j) s.h[j] = activate(w.act[0], clip(p, xw[j] + hr[j]));
}

void gru_step(const RnnParams& p, const Weights& w, const double* xw, const double* hr, State& s) {
  const int64_t n = p.hidden_size;
  std::vector<double> z(n), r(n), hh(n);
  for (int64_t j = 0; j < n; ++j) {
    z[j] = activate(w.act[0], clip(p, xw[j] + hr[j]));
    r[j] = activate(w.act[0], clip(p, xw[n + j] + hr[n + j]));
  }
  if (p.linear_before_reset) {
    for (int64_t j = 0; j < n; ++j) hh[j] = xw[2 * n + j] + r[j] * hr[2 * n + j];
  } else {
    // R_h (r * h) + Rb_h
    std::vector<double> rh(n);
    for (int64_t k = 0; k < n; ++k) rh[k] = r[k] * s.h[k];
    for (int64_t j = 0; j < n; ++j) {
      double acc = w.rb[2 * n + j];
      for (int64_t k = 0; k < n; ++k) acc += w.r[(2 * n + j) * n + k] * rh[k];
      hh[j] = xw[2 * n + j] + acc;
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    const double candidate = activate(w.act[1], clip(p, hh[j]));
    s.h[j] = (1.0 - z[j]) * candidate + z[j] * s.h[j];
  }
}

// Gate blocks in W, R and B: i, o, f, c; peepholes: i, o, f.
void lstm_step(const RnnParams& p, const Weights& w, const double* xw, const double* hr, State& s) {
  const int64_t n = p.hidden_size;
  for (int64_t j = 0; j < n; ++j) {
    const auto pre = [&](int gate) { return xw[gate * n + j] + hr[gate * n + j]; };
    const double c_prev = s.c[j];
    const double i = activate(w.act[0], clip(p, pre(0) + w.peep[j] * c_prev));
    const double f =
        p.input_forget ? 1.0 - i : activate(w.act[0], clip(p, pre(2) + w.peep[2 * n + j] * c_prev));
    const double candidate = activate(w.act[1], clip(p, pre(3)));
    const double c = f * c_prev + i * candidate;
    const double o = activate(w.act[0], clip(p, pre(1) + w.peep[n + j] * c));
    s.c[j] = c;
    s.h[j] = o * activate(w.act[2], c);
  }
}

// Runs direction d over batch entry b.
template <typename T>
void run_sequence(const RnnParams& p, const Weights& w, const RnnInputs<T>& in,
                  const RnnOutputs<T>& out, int d, int64_t b) {
  const Layout at{p};
  const int64_t n = p.hidden_size;
  const int64_t gh = gate_count(p.cell) * n;
  const bool backwards = d == 1 || p.reverse;
  const int64_t steps = in.seq_lens != nullptr ? in.seq_lens[b] : p.seq_length;
  State s{to_doubles(in.initial_h, at.state(d, b), n), to_doubles(in.initial_c, at.state(d, b), n)};
  std::vector<double> x(p.input_size), xw(gh), hr(gh);
  for (int64_t step = 0; step < steps; ++step) {
    const int64_t t = backwards ? steps - 1 - step : step;
    for (int64_t i = 0; i < p.input_size; ++i) x[i] = to_double(in.x[at.x(t, b) + i]);
    affine(w.w, w.wb, gh, p.input_size, x.data(), xw.data());
    affine(w.r, w.rb, gh, n, s.h.data(), hr.data());
    switch (p.cell) {
      case RnnCell::kRnn:
        rnn_step(p, w, xw.data(), hr.data(), s);
        break;
      case RnnCell::kGru:
        gru_step(p, w, xw.data(), hr.data(), s);
        break;
      case RnnCell::kLstm:
        lstm_step(p, w, xw.data(), hr.data(), s);
        break;
    }
    if (out.y != nullptr) {
      for (int64_t j = 0; j < n; ++j) out.y[at.y(t, d, b) + j] = from_acc<T>(s.h[j]);
    }
  }
  for (int64_t t = steps; out.y != nullptr && t < p.seq_length; ++t) {
    for (int64_t j = 0; j < n; ++j) out.y[at.y(t, d, b) + j] = from_acc<T>(0.0);
  }
  for (int64_t j = 0; j < n; ++j) {
    if (out.y_h != nullptr) out.y_h[at.state(d, b) + j] = from_acc<T>(s.h[j]);
    if (out.y_c != nullptr) out.y_c[at.state(d, b) + j] = from_acc<T>(s.c[j]);
  }
}

}  // namespace

template <typename T>
void rnn(const RnnParams& p, const RnnInputs<T>& in, const RnnOutputs<T>& out) {
  for (int d = 0; d < p.num_directions; ++d) {
    const Weights w = direction_weights(p, in, d);
    for (int64_t b = 0; b < p.batch; ++b) run_sequence(p, w, in, out, d, b);
  }
}

#define KILN_INSTANTIATE_RNN(T) \
  template void rnn<T>(const RnnParams&, const RnnInputs<T>&, const RnnOutputs<T>&);
KILN_REF_FOR_FLOAT_TYPES(KILN_INSTANTIATE_RNN)
#undef KILN_INSTANTIATE_RNN

}  // namespace kiln::kernels::ref
