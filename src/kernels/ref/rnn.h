#pragma once
// Reference recurrent layers: RNN, GRU and LSTM as ONNX defines them.
//
// Shapes (H = hidden_size, G = gates: 1 for RNN, 3 for GRU (z, r, h), 4 for LSTM (i, o, f, c)):
//   X [seq, batch, input] (batch-major: [batch, seq, input])
//   W [dirs, G*H, input], R [dirs, G*H, H], B [dirs, 2*G*H] (W biases then R biases)
//   initial_h, initial_c, Y_h, Y_c [dirs, batch, H] (batch-major: [batch, dirs, H])
//   P [dirs, 3*H] (LSTM peepholes i, o, f), Y [seq, dirs, batch, H] (batch-major: [batch, seq,
//   dirs, H])
// Direction 0 runs forward unless `reverse`; with two directions, direction 1 runs in reverse.
// Everything is computed in double. With sequence lengths, batch entry b runs seq_lens[b] steps
// (reverse directions start at step seq_lens[b] - 1), Y is 0 at the steps beyond and Y_h / Y_c
// hold the state after the last step (the initial state when seq_lens[b] is 0).

#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

enum class RnnCell { kRnn, kGru, kLstm };

enum class RnnActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,           // alpha * x + beta
  kLeakyRelu,        // x < 0 ? alpha * x : x
  kThresholdedRelu,  // x > alpha ? x : 0
  kScaledTanh,       // alpha * tanh(beta * x)
  kHardSigmoid,      // max(0, min(1, alpha * x + beta))
  kElu,              // x < 0 ? alpha * (exp(x) - 1) : x
  kSoftsign,
  kSoftplus,
};

struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;
};

struct RnnParams {
  RnnCell cell = RnnCell::kLstm;
  int64_t seq_length = 0;
  int64_t batch = 0;
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int num_directions = 1;
  bool reverse = false;              // a single direction that runs backwards
  bool batch_major = false;          // layout 1
  float clip = 0.0f;                 // > 0: gate pre-activations are clipped to [-clip, clip]
  bool input_forget = false;         // LSTM: f = 1 - i
  bool linear_before_reset = false;  // GRU: r applies after the recurrent product
  // Per direction: f (RNN); f, g (GRU); f, g, h (LSTM). Direction d's come at d * count.
  std::vector<RnnActivation> activations;
};

// Inputs; b, seq_lens, initial_h, initial_c and p may be null (zeros / full length).
template <typename T>
struct RnnInputs {
  const T* x = nullptr;
  const T* w = nullptr;
  const T* r = nullptr;
  const T* b = nullptr;
  const int32_t* seq_lens = nullptr;
  const T* initial_h = nullptr;
  const T* initial_c = nullptr;
  const T* p = nullptr;
};

// Outputs; any may be null when the model does not ask for it.
template <typename T>
struct RnnOutputs {
  T* y = nullptr;
  T* y_h = nullptr;
  T* y_c = nullptr;
};

// T is float, double or Half. seq_lens must be in [0, seq_length] (checked by the caller).
template <typename T>
void rnn(const RnnParams& p, const RnnInputs<T>& in, const RnnOutputs<T>& out);

}  // namespace kiln::kernels::ref
