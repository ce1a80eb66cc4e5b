// MatMul, Gemm and kiln.FusedGemm on oneDNN's matmul primitive. Transposed operands are strided
// descriptors (no copy), alpha an output scale, Gemm's C the primitive's bias (broadcast by its
// dims), FusedGemm's activation eltwise post-ops. oneDNN 2.6 scales the biased product,
// alpha * (A x B + bias), so the bias is beta / alpha * C: computed once for a constant C, and C
// itself when beta == alpha. A constant B is reordered once into the primitive's preferred layout.

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "tactics/onednn/onednn_common.h"
#include "tactics/onednn/onednn_tactics.h"

namespace kiln::tactics::onednn {
namespace {

namespace ref = kernels::ref;
using dnnl::memory;

enum class Form {
  kMatMul,     // ONNX MatMul: numpy broadcasting of batch dims, 1-D operands promoted
  kGemm,       // 2-D A and B, optional transposes, alpha, beta, C broadcast to [M, N]
  kFusedGemm,  // Gemm, or A of rank > 2 (transA = 0) flattened to rows, C broadcast to [1, N]
};

// The primitive's descriptors for concrete shapes.
struct MatMulShapes {
  memory::desc a, b, dst;
  memory::dims b_dims;  // B's logical dims ([.., K, N])
  memory::dims bias;    // empty: no bias
};

Result<MatMulShapes> matmul_shapes(std::span<const int64_t> a_in, std::span<const int64_t> b_in) {
  memory::dims a(a_in.begin(), a_in.end()), b(b_in.begin(), b_in.end());
  if (a.size() == 1) a.insert(a.begin(), 1);  // [K] -> [1, K]
  if (b.size() == 1) b.push_back(1);          // [K] -> [K, 1]
  const size_t rank = std::max(a.size(), b.size());
  a.insert(a.begin(), rank - a.size(), 1);
  b.insert(b.begin(), rank - b.size(), 1);
  if (a[rank - 1] != b[rank - 2]) return invalid_argument("inner dimensions do not match");
  memory::dims y(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
      return invalid_argument("batch dims do not broadcast");
    }
    y[i] = a[i] == 1 ? b[i] : a[i];
  }
  y[rank - 2] = a[rank - 2];
  y[rank - 1] = b[rank - 1];
  return MatMulShapes{plain_desc(a), plain_desc(b), plain_desc(y), b, {}};
}

// A [M, K] (or [K, M] with trans) as a [M, K] descriptor.
memory::desc matrix_desc(int64_t rows, int64_t cols, bool trans) {
  return trans ? strided_desc({rows, cols}, {1, rows}) : plain_desc({rows, cols});
}

class MatMulKernel final : public LayerKernel {
 public:
  MatMulKernel(const LayerSpec& spec, Form form)
      : node_(*spec.node),
        form_(form),
        trans_a_(spec.node->attrs.get_int("transA", 0) != 0),
        trans_b_(spec.node->attrs.get_int("transB", 0) != 0),
        alpha_(spec.node->attrs.get_float("alpha", 1.0f)),
        beta_(spec.node->attrs.get_float("beta", 1.0f)),
        activation_(form == Form::kFusedGemm ? activation_of(*spec.node)
                                             : ref::ActivationParams{}) {
    if (const Tensor* b = spec.constant(1)) b_ = *b;
    prepacked_ = spec.prepacked;
    has_c_ = form != Form::kMatMul && spec.has_input(2);
    if (has_c_ && beta_ != alpha_ && spec.constant(2) != nullptr) {
      const Tensor& c = *spec.constant(2);
      scaled_c_ = Tensor(DType::kF32, c.dims());
      const float scale = beta_ / alpha_;
      for (int64_t i = 0; i < c.numel(); ++i)
        scaled_c_.data<float>()[i] = scale * c.data<float>()[i];
    }
  }

  // B as the engine stores it (stored_weights), packed for one row (or batch) of A when A's
  // leading dim is dynamic (a context whose primitive wants another layout reorders it); empty
  // for other dynamic dims and FP16 layers (packed when the engine loads).
  Result<Tensor> prepack(const LayerSpec& spec) {
    if (spec.fp16_weights) return Tensor();
    KILN_ASSIGN_OR_RETURN(std::optional<MatMulShapes> s, static_shapes(spec));
    if (!s) return Tensor();
    OmpThreads threads(nullptr);
    try {
      return stored_weights(b_.raw_data(), s->b, primitive_desc(*s).weights_desc());
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const std::span<const int64_t> c_dims = has_c_ ? in[2].dims : std::span<const int64_t>{};
    Result<MatMulShapes> s = shapes(in[0].dims, in[1].dims, c_dims);
    if (!s.is_ok()) return layer_status(node_, s.status().message());
    if (s->dst.get_size() != out[0].nbytes()) {
      return internal_error("node '{}' ({}): output [{}] does not hold the product", node_.name,
                            node_.op_type, fmt::join(out[0].dims, ","));
    }
    OmpThreads threads(thread_pool());
    try {
      const auto pd = primitive_desc(*s);
      if (b_.defined()) KILN_RETURN_IF_ERROR(pack(s->b, pd.weights_desc()));
      exec_.init(dnnl::matmul(pd), pd.scratchpad_desc());
      a_slot_ = exec_.add(DNNL_ARG_SRC, pd.src_desc());
      b_slot_ = exec_.add(DNNL_ARG_WEIGHTS, pd.weights_desc());
      c_slot_ = has_c_ ? exec_.add(DNNL_ARG_BIAS, pd.bias_desc()) : -1;
      y_slot_ = exec_.add(DNNL_ARG_DST, pd.dst_desc());
      if (b_.defined()) exec_.bind(b_slot_, packed_.data());
      if (scaled_c_.defined()) exec_.bind(c_slot_, scaled_c_.raw_data());
    } catch (const dnnl::error& e) {
      return layer_status(node_, e);
    }
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    OmpThreads threads(thread_pool());
    exec_.bind(a_slot_, in[0].data);
    if (!b_.defined()) exec_.bind(b_slot_, in[1].data);
    if (has_c_ && !scaled_c_.defined()) exec_.bind(c_slot_, in[2].data);
    exec_.bind(y_slot_, out[0].data);
    return exec_.execute();
  }

 private:
  // The shapes when A's (and C's) are static but for A's dynamic leading dim (taken as 1), else
  // nullopt.
  Result<std::optional<MatMulShapes>> static_shapes(const LayerSpec& spec) const {
    const std::optional<Dims> a = known_dims(spec.inputs[0], /*any_batch=*/true);
    if (!b_.defined() || !a) return std::optional<MatMulShapes>();
    std::optional<Dims> c_dims = Dims{};
    if (has_c_ && spec.inputs[2].has_rank()) c_dims = known_dims(spec.inputs[2], false);
    if (!c_dims) return std::optional<MatMulShapes>();
    KILN_ASSIGN_OR_RETURN(MatMulShapes s, shapes(*a, b_.dims(), *c_dims));
    return std::optional<MatMulShapes>(std::move(s));
  }

  // The constant B (laid out as `from`) packed as `to`: the engine's copy when it has one, else
  // from the values.
  Status pack(const memory::desc& from, const memory::desc& to) {
    Status st = prepacked_ != nullptr ? packed_.adopt(*prepacked_, to)
                                      : packed_.pack(b_.raw_data(), from, to);
    return st.is_ok() ? st : layer_status(node_, st.message());
  }

  Result<MatMulShapes> shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                              std::span<const int64_t> c) const {
    if (form_ == Form::kMatMul) return matmul_shapes(a, b);
    // Gemm: one [M, K] x [K, N]; FusedGemm flattens a batched A to rows.
    const int64_t k = a.back();
    const bool batched = a.size() > 2;
    const int64_t rows = k == 0 ? 0 : dims_numel(a) / k;
    const int64_t m = batched ? rows : a[trans_a_ ? 1 : 0];
    const int64_t ka = batched ? k : a[trans_a_ ? 0 : 1];
    const int64_t kb = b[trans_b_ ? 1 : 0], n = b[trans_b_ ? 0 : 1];
    if (ka != kb) return invalid_argument("inner dimensions do not match");
    MatMulShapes s;
    s.a = matrix_desc(m, ka, trans_a_);
    s.b = matrix_desc(kb, n, trans_b_);
    s.b_dims = {kb, n};
    s.dst = plain_desc({m, n});
    if (has_c_) {
      // C's dims right-aligned to [M, N]; each 1 or equal (shape inference checked).
      s.bias = {1, 1};
      for (size_t i = 0; i < c.size(); ++i) s.bias[2 - c.size() + i] = c[i];
    }
    return s;
  }

  dnnl::matmul::primitive_desc primitive_desc(const MatMulShapes& s) const {
    const memory::desc b_md =
        b_.defined() ? memory::desc(s.b_dims, memory::data_type::f32, memory::format_tag::any)
                     : s.b;
    dnnl::primitive_attr attr = base_attr();
    if (alpha_ != 1.0f) attr.set_output_scales(0, {alpha_});
    dnnl::post_ops ops;
    append_activation(activation_, ops);
    attr.set_post_ops(ops);
    const auto desc = s.bias.empty() ? dnnl::matmul::desc(s.a, b_md, s.dst)
                                     : dnnl::matmul::desc(s.a, b_md, plain_desc(s.bias), s.dst);
    return dnnl::matmul::primitive_desc(desc, attr, cpu_engine());
  }

  const ir::Node& node_;
  Form form_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  ref::ActivationParams activation_;
  bool has_c_ = false;
  Tensor b_;                           // the constant B, or undefined
  const Tensor* prepacked_ = nullptr;  // the engine's packed B (prepack()), or null
  Tensor scaled_c_;                    // beta * C for a constant C and beta != 1
  PackedWeights packed_;
  Exec exec_;
  int a_slot_ = -1, b_slot_ = -1, c_slot_ = -1, y_slot_ = -1;
};

std::string gemm_why_not(const LayerSpec& spec, Form form) {
  std::string why = require_f32(spec);
  const bool batched_a =
      form == Form::kFusedGemm && spec.inputs[0].has_rank() && spec.inputs[0].rank() > 2;
  if (why.empty()) why = require_rank(spec, 0, 2, batched_a ? 12 : 2);
  if (why.empty()) why = require_rank(spec, 1, 2, 2);
  if (why.empty() && spec.has_input(2)) why = require_rank(spec, 2, 0, 2);
  if (!why.empty()) return why;
  if (batched_a && spec.node->attrs.get_int("transA", 0) != 0) return "transA with a batched A";
  const float alpha = spec.node->attrs.get_float("alpha", 1.0f);
  const float beta = spec.node->attrs.get_float("beta", 1.0f);
  if (alpha == 0.0f) return "alpha = 0 (the output scale would also zero C)";
  if (spec.has_input(2) && beta != alpha && spec.constant(2) == nullptr) {
    return fmt::format(
        "beta = {} differs from alpha = {} with a non-constant C: oneDNN scales the biased product",
        beta, alpha);
  }
  if (form == Form::kFusedGemm && spec.has_input(3)) {
    return "it adds a residual Z (kiln's tactics fuse it; this one would need a binary post-op)";
  }
  return form == Form::kFusedGemm ? activation_why_not(*spec.node) : "";
}

constexpr size_t kBInput[] = {1};

class MatMulTactic final : public OnednnTactic {
 public:
  MatMulTactic(std::string_view name, std::string_view domain, std::string_view op, Form form)
      : OnednnTactic(name, domain, op), form_(form) {}
  std::string why_not(const LayerSpec& spec) const override {
    if (form_ != Form::kMatMul) return gemm_why_not(spec, form_);
    std::string why = require_f32(spec);
    // oneDNN's memory descriptors have at most 12 dims.
    if (why.empty()) why = require_rank(spec, 0, 1, 12);
    if (why.empty()) why = require_rank(spec, 1, 1, 12);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    if (spec.prepacked != nullptr) {
      KILN_RETURN_IF_ERROR(check_stored_weights(*spec.node, *spec.prepacked));
    }
    return std::unique_ptr<LayerKernel>(std::make_unique<MatMulKernel>(spec, form_));
  }
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    LayerSpec own = spec;
    own.prepacked = nullptr;
    return MatMulKernel(own, form_).prepack(own);
  }
  // B, which the stored weights replace.
  std::span<const size_t> packed_inputs() const override { return kBInput; }

 private:
  Form form_;
};

}  // namespace

const Tactic& matmul_tactic() {
  static const MatMulTactic tactic("onednn.matmul.f32", "", "MatMul", Form::kMatMul);
  return tactic;
}

const Tactic& gemm_tactic() {
  static const MatMulTactic tactic("onednn.gemm.f32", "", "Gemm", Form::kGemm);
  return tactic;
}

const Tactic& fused_gemm_tactic() {
  static const MatMulTactic tactic("onednn.fused_gemm.f32", "kiln", "FusedGemm", Form::kFusedGemm);
  return tactic;
}

}  // namespace kiln::tactics::onednn
