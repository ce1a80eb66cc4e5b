// The recurrent family: RNN, GRU and LSTM (opsets 7 and 14; 14 added `layout`). The math lives in
// kernels/ref/rnn.{h,cc}; this file validates attributes and shapes and binds the inputs.
#include "kernels/ref/rnn.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "ops/families.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;
using ir::AttrType;
using ref::RnnActivationKind;

// Input and output positions, shared by the three ops (GRU and RNN stop at initial_h / Y_h).
enum Input : size_t { kX, kW, kR, kB, kSeqLens, kInitialH, kInitialC, kP };
enum Output : size_t { kY, kYh, kYc };

struct CellInfo {
  ref::RnnCell cell;
  int64_t gates;                               // blocks in W, R and each half of B
  std::vector<std::string_view> default_acts;  // per direction
};

CellInfo cell_info(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  if (op == "LSTM") return {ref::RnnCell::kLstm, 4, {"Sigmoid", "Tanh", "Tanh"}};
  if (op == "GRU") return {ref::RnnCell::kGru, 3, {"Sigmoid", "Tanh"}};
  return {ref::RnnCell::kRnn, 1, {"Tanh"}};
}

struct ActivationSpec {
  std::string_view name;
  RnnActivationKind kind;
  bool uses_alpha;
  bool uses_beta;
  float alpha;  // defaults, as for the ONNX operators of the same name
  float beta;
};

constexpr std::array<ActivationSpec, 11> kActivations = {{
    {"Relu", RnnActivationKind::kRelu, false, false, 0.0f, 0.0f},
    {"Tanh", RnnActivationKind::kTanh, false, false, 0.0f, 0.0f},
    {"Sigmoid", RnnActivationKind::kSigmoid, false, false, 0.0f, 0.0f},
    {"Affine", RnnActivationKind::kAffine, true, true, 1.0f, 0.0f},
    {"LeakyRelu", RnnActivationKind::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"ThresholdedRelu", RnnActivationKind::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"ScaledTanh", RnnActivationKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"HardSigmoid", RnnActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"Elu", RnnActivationKind::kElu, true, false, 1.0f, 0.0f},
    {"Softsign", RnnActivationKind::kSoftsign, false, false, 0.0f, 0.0f},
    {"Softplus", RnnActivationKind::kSoftplus, false, false, 0.0f, 0.0f},
}};

const ActivationSpec* find_activation(std::string_view name) {
  const auto same = [&](const ActivationSpec& s) {
    return std::equal(name.begin(), name.end(), s.name.begin(), s.name.end(), [](char a, char b) {
      return std::tolower(static_cast<unsigned char>(a)) ==
             std::tolower(static_cast<unsigned char>(b));
    });
  };
  const auto it = std::find_if(kActivations.begin(), kActivations.end(), same);
  return it == kActivations.end() ? nullptr : &*it;
}

// The activations of every direction. activation_alpha and activation_beta are consumed in order
// by the activations that take that parameter; the others get the operator's default.
Result<std::vector<ref::RnnActivation>> activations(const NodeContext& ctx, const CellInfo& info,
                                                    int dirs) {
  const size_t k = info.default_acts.size();
  std::vector<std::string> names = ctx.attrs().get_strings("activations");
  if (names.empty()) names.assign(info.default_acts.begin(), info.default_acts.end());
  if (names.size() == k && dirs == 2) {
    const std::vector<std::string> one_direction = names;  // both directions use the same ones
    names.insert(names.end(), one_direction.begin(), one_direction.end());
  }
  if (names.size() != k * static_cast<size_t>(dirs)) {
    return ctx.error("attribute activations has {} entries; expected {} per direction ({} in all)",
                     names.size(), k, k * static_cast<size_t>(dirs));
  }
  const std::vector<float> alphas = ctx.attrs().get_floats("activation_alpha");
  const std::vector<float> betas = ctx.attrs().get_floats("activation_beta");
  size_t next_alpha = 0;
  size_t next_beta = 0;
  std::vector<ref::RnnActivation> out;
  for (const std::string& name : names) {
    const ActivationSpec* s = find_activation(name);
    if (s == nullptr)
      return ctx.error("attribute activations names an unknown function '{}'", name);
    ref::RnnActivation a{s->kind, s->alpha, s->beta};
    if (s->uses_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (s->uses_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

// Everything in RnnParams that comes from attributes (not the dims).
Result<ref::RnnParams> attr_params(const NodeContext& ctx) {
  const CellInfo info = cell_info(ctx);
  ref::RnnParams p;
  p.cell = info.cell;
  const std::string direction = ctx.attrs().get_string("direction", "forward");
  if (direction == "bidirectional") {
    p.num_directions = 2;
  } else if (direction == "reverse") {
    p.reverse = true;
  } else if (direction != "forward") {
    return ctx.error("attribute direction is '{}'; expected forward, reverse or bidirectional",
                     direction);
  }
  if (ctx.since_version() < 14 && ctx.attrs().has("layout")) {
    return ctx.error("attribute layout exists only from opset 14 (this node is version {})",
                     ctx.since_version());
  }
  const int64_t layout = ctx.attrs().get_int("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.error("attribute layout is {}; expected 0 or 1", layout);
  p.batch_major = layout == 1;
  if (ctx.attrs().has("clip")) {
    p.clip = ctx.attrs().get_float("clip", 0.0f);
    if (!(p.clip > 0.0f)) return ctx.error("attribute clip is {}; it must be positive", p.clip);
  }
  p.input_forget = ctx.attrs().get_int("input_forget", 0) != 0;
  p.linear_before_reset = ctx.attrs().get_int("linear_before_reset", 0) != 0;
  KILN_ASSIGN_OR_RETURN(p.activations, activations(ctx, info, p.num_directions));
  const int64_t hidden = ctx.attrs().get_int("hidden_size", 1);
  if (hidden <= 0) return ctx.error("attribute hidden_size is {}; it must be positive", hidden);
  // Keeps gates * hidden_size far from int64 overflow in the shape checks.
  if (hidden > (int64_t{1} << 31)) {
    return ctx.unsupported("attribute hidden_size {} is above the supported maximum 2^31", hidden);
  }
  return p;
}

// The dims every input and output is checked against; unknown where the graph does not say.
struct RnnDims {
  ir::Dim seq, batch, input, hidden, dirs;
  int64_t gates = 1;
  bool batch_major = false;

  ir::Dim times(int64_t k, const ir::Dim& d) const {
    return d.is_known() ? ir::Dim::known(k * d.value) : ir::Dim::unknown();
  }
  ir::Shape state() const {
    return batch_major ? ir::Shape{batch, dirs, hidden} : ir::Shape{dirs, batch, hidden};
  }
  ir::Shape y() const {
    return batch_major ? ir::Shape{batch, seq, dirs, hidden} : ir::Shape{seq, dirs, batch, hidden};
  }
};

const char* input_name(size_t i) {
  static constexpr const char* kNames[] = {"X",         "W",         "R", "B", "sequence_lens",
                                           "initial_h", "initial_c", "P"};
  return kNames[i];
}

// Input i (when present and of known rank) must have `expected` dims where both are known.
Status check_input_shape(const InferContext& ctx, size_t i, const ir::Shape& expected) {
  if (!ctx.has_input(i) || !ctx.input(i).has_rank()) return Status::ok();
  const ir::TensorDesc& d = ctx.input(i);
  bool ok = d.rank() == static_cast<int>(expected.size());
  for (int k = 0; ok && k < d.rank(); ++k) {
    const ir::Dim& want = expected[static_cast<size_t>(k)];
    ok = !(d.dim(k).is_known() && want.is_known() && d.dim(k).value != want.value);
  }
  if (ok) return Status::ok();
  ir::TensorDesc want{d.dtype, expected};
  return ctx.error("input {} ({}) is {}; expected {}", i, input_name(i), d.to_string(),
                   want.to_string());
}

// Dim `k` of input i when its rank is known, else unknown.
ir::Dim input_dim(const InferContext& ctx, size_t i, int k) {
  if (!ctx.has_input(i) || !ctx.input(i).has_rank() || ctx.input(i).rank() <= k) return {};
  return ctx.input(i).dim(k);
}

Result<RnnDims> rnn_dims(const InferContext& ctx, const ref::RnnParams& p) {
  const ir::TensorDesc& x = ctx.input(kX);
  if (x.has_rank() && x.rank() != 3) {
    return ctx.error("input 0 (X) must have rank 3, got {}", x.to_string());
  }
  RnnDims d;
  d.gates = cell_info(ctx).gates;
  d.batch_major = p.batch_major;
  d.seq = input_dim(ctx, kX, p.batch_major ? 1 : 0);
  d.batch = input_dim(ctx, kX, p.batch_major ? 0 : 1);
  d.input = input_dim(ctx, kX, 2);
  d.dirs = ir::Dim::known(p.num_directions);
  d.hidden = ctx.attrs().has("hidden_size") ? ir::Dim::known(ctx.attrs().get_int("hidden_size", 0))
                                            : input_dim(ctx, kR, 2);
  return d;
}

Status check_rnn_inputs(const InferContext& ctx, const RnnDims& d) {
  const ir::Dim gh = d.times(d.gates, d.hidden);
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kW, {d.dirs, gh, d.input}));
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kR, {d.dirs, gh, d.hidden}));
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kB, {d.dirs, d.times(2 * d.gates, d.hidden)}));
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kSeqLens, {d.batch}));
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kInitialH, d.state()));
  KILN_RETURN_IF_ERROR(check_input_shape(ctx, kInitialC, d.state()));
  return check_input_shape(ctx, kP, {d.dirs, d.times(3, d.hidden)});
}

Status infer_rnn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(require_input(ctx, kW, "W"));
  KILN_RETURN_IF_ERROR(require_input(ctx, kR, "R"));
  const size_t same[] = {kW, kR, kB, kInitialH, kInitialC, kP};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes, same));
  if (ctx.has_input(kSeqLens) && ctx.input(kSeqLens).dtype != DType::kI32) {
    return ctx.error("input 4 (sequence_lens) must be int32, got {}",
                     dtype_name(ctx.input(kSeqLens).dtype));
  }
  KILN_ASSIGN_OR_RETURN(const ref::RnnParams p, attr_params(ctx));
  KILN_ASSIGN_OR_RETURN(const RnnDims d, rnn_dims(ctx, p));
  KILN_RETURN_IF_ERROR(check_rnn_inputs(ctx, d));
  const DType t = ctx.input(kX).dtype;
  if (ctx.has_output(kY)) ctx.set_output(kY, ir::TensorDesc::of(t, d.y()));
  if (ctx.has_output(kYh)) ctx.set_output(kYh, ir::TensorDesc::of(t, d.state()));
  if (ctx.has_output(kYc)) ctx.set_output(kYc, ir::TensorDesc::of(t, d.state()));
  return Status::ok();
}

Status check_sequence_lens(const RunContext& ctx, const ref::RnnParams& p) {
  if (!ctx.has_input(kSeqLens)) return Status::ok();
  const Tensor& lens = ctx.input(kSeqLens);
  for (int64_t b = 0; b < lens.numel(); ++b) {
    const int32_t v = lens.data<int32_t>()[b];
    if (v < 0 || v > p.seq_length) {
      return ctx.error("sequence_lens[{}] is {}; it must be in [0, {}] (the sequence length)", b, v,
                       p.seq_length);
    }
  }
  return Status::ok();
}

template <typename T>
const T* optional_data(const RunContext& ctx, size_t i) {
  return ctx.has_input(i) ? ctx.input(i).data<T>() : nullptr;
}

template <typename T>
T* optional_output(RunContext& ctx, size_t i) {
  return ctx.has_output(i) ? ctx.allocate_output(i).data<T>() : nullptr;
}

Status run_rnn(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ref::RnnParams p, attr_params(ctx));
  const Tensor& x = ctx.input(kX);
  p.seq_length = x.dim(p.batch_major ? 1 : 0);
  p.batch = x.dim(p.batch_major ? 0 : 1);
  p.input_size = x.dim(2);
  p.hidden_size = ctx.input(kR).dim(2);
  KILN_RETURN_IF_ERROR(check_sequence_lens(ctx, p));
  const bool ok = dispatch_float(x.dtype(), [&]<typename T>() {
    ref::RnnInputs<T> in;
    in.x = x.data<T>();
    in.w = ctx.input(kW).data<T>();
    in.r = ctx.input(kR).data<T>();
    in.b = optional_data<T>(ctx, kB);
    in.seq_lens = ctx.has_input(kSeqLens) ? ctx.input(kSeqLens).data<int32_t>() : nullptr;
    in.initial_h = optional_data<T>(ctx, kInitialH);
    in.initial_c = optional_data<T>(ctx, kInitialC);
    in.p = optional_data<T>(ctx, kP);
    const ref::RnnOutputs<T> out{optional_output<T>(ctx, kY), optional_output<T>(ctx, kYh),
                                 optional_output<T>(ctx, kYc)};
    ref::rnn<T>(p, in, out);
  });
  if (!ok) return ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
  return Status::ok();
}

std::vector<AttrSpec> rnn_attrs(std::initializer_list<AttrSpec> extra) {
  std::vector<AttrSpec> attrs = {{"activation_alpha", AttrType::kFloats},
                                 {"activation_beta", AttrType::kFloats},
                                 {"activations", AttrType::kStrings},
                                 {"clip", AttrType::kFloat},
                                 {"direction", AttrType::kString},
                                 {"hidden_size", AttrType::kInt},
                                 {"layout", AttrType::kInt}};
  attrs.insert(attrs.end(), extra);
  return attrs;
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  r.add({.op_type = "RNN",
         .since_versions = {7, 14},
         .min_inputs = 3,
         .max_inputs = 6,
         .min_outputs = 0,
         .max_outputs = 2,
         .attrs = rnn_attrs({}),
         .infer = infer_rnn,
         .run = run_rnn});
  r.add({.op_type = "GRU",
         .since_versions = {7, 14},
         .min_inputs = 3,
         .max_inputs = 6,
         .min_outputs = 0,
         .max_outputs = 2,
         .attrs = rnn_attrs({{"linear_before_reset", AttrType::kInt}}),
         .infer = infer_rnn,
         .run = run_rnn});
  r.add({.op_type = "LSTM",
         .since_versions = {7, 14},
         .min_inputs = 3,
         .max_inputs = 8,
         .min_outputs = 0,
         .max_outputs = 3,
         .attrs = rnn_attrs({{"input_forget", AttrType::kInt}}),
         .infer = infer_rnn,
         .run = run_rnn});
}

}  // namespace kiln::ops
