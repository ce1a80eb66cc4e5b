// Gemm, MatMul and kiln.FusedGemm with a constant B on kiln's x86 GEMM (kernels/x86): B is packed
// into the microkernel's column panels when the engine is built (prepack); alpha, C (any
// broadcast, scaled by beta), FusedGemm's residual Z and the activation run in the epilogue. A
// batched A (MatMul, FusedGemm) is one tall matrix of rows against the single B.
//
// The *.f16w.* variants take FP16 layers only (--fp16: B holds binary16 values): they pack B as
// binary16 panels when the engine is loaded and widen them in the microkernel, reading half the
// bytes per inference; the float32 variants run those layers too (same numerics), and the tuner
// picks by time.
#include <fmt/format.h>

#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

using builtin::input_f32;
using builtin::layer_error;
using builtin::optional_input;

enum class GemmOp { kGemm, kMatMul, kFusedGemm };

// B (k x n, or n x k when trans_b) packed into the microkernel's column panels: prepack()'s result,
// and what a kernel packs for itself when the engine carries no prepacked B.
Tensor pack_b(kx::Isa isa, const Tensor& b, bool trans_b) {
  const int64_t k = b.dim(trans_b ? 1 : 0), n = b.dim(trans_b ? 0 : 1);
  Tensor packed = packed_tensor(kx::gemm_packed_b_floats(isa, k, n));
  kx::gemm_pack_b(isa, b.data<float>(), trans_b ? 1 : n, trans_b ? k : 1, k, n,
                  packed.data<float>());
  return packed;
}

std::string gemm_why_not(const LayerSpec& spec, GemmOp op) {
  std::string why = builtin::require_f32(spec);
  if (!why.empty()) return why;
  if (op == GemmOp::kGemm) {
    why = builtin::require_rank(spec, 0, 2, 2);
  } else {
    why = builtin::require_rank(spec, 0, 2, 64);
  }
  if (why.empty()) why = builtin::require_rank(spec, 1, 2, 2);
  if (!why.empty()) {
    return op == GemmOp::kMatMul ? why + " (this tactic multiplies by one constant 2-D B)" : why;
  }
  if (op != GemmOp::kMatMul && spec.has_input(2)) {
    why = builtin::require_rank(spec, 2, 0, 2);
    if (!why.empty()) return why;
  }
  if (op == GemmOp::kFusedGemm) why = activation_why_not(*spec.node);
  if (!why.empty()) return why;
  if (op == GemmOp::kFusedGemm && spec.has_input(3) && spec.has_input(2)) {
    const ir::TensorDesc& c = spec.inputs[2];
    if (c.rank() == 2 && !(c.dim(0).is_known() && c.dim(0).value == 1)) {
      return "C may have a row per output row and the residual Z is added too: the epilogue adds "
             "one matrix (C becomes a column bias when it is one row)";
    }
  }
  if (spec.constant(1) == nullptr) {
    return "input 1 (B) is not a constant: this tactic packs it when the engine is built";
  }
  return "";
}

class X86GemmKernel final : public LayerKernel {
 public:
  X86GemmKernel(const LayerSpec& spec, GemmOp op, kx::Isa isa, bool f16)
      : node_(*spec.node), op_(op), isa_(isa), f16_(f16) {
    if (op != GemmOp::kMatMul) {
      trans_a_ = node_.attrs.get_int("transA", 0) != 0;
      trans_b_ = node_.attrs.get_int("transB", 0) != 0;
      epilogue_.alpha = node_.attrs.get_float("alpha", 1.0f);
      beta_ = node_.attrs.get_float("beta", 1.0f);
    }
    if (op == GemmOp::kFusedGemm) set_activation(node_, epilogue_);
  }

  // The engine's prepacked B when it has the size this ISA's layout needs, else packed here.
  Status set_weights(const LayerSpec& spec) {
    const Tensor& b = *spec.constant(1);
    k_ = b.dim(trans_b_ ? 1 : 0);
    n_ = b.dim(trans_b_ ? 0 : 1);
    if (f16_) {
      half_.resize(kx::gemm_packed_b_floats(isa_, k_, n_));
      kx::gemm_pack_b_f16(isa_, b.data<float>(), trans_b_ ? 1 : n_, trans_b_ ? k_ : 1, k_, n_,
                          half_.data());
      return Status::ok();
    }
    const size_t floats = kx::gemm_packed_b_floats(isa_, k_, n_);
    KILN_ASSIGN_OR_RETURN(packed_, packed_weights(spec, matching_prepacked(spec, floats), floats,
                                                  own_, [&] { return pack_b(isa_, b, trans_b_); }));
    return Status::ok();
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& a = in[0];
    const bool batched = a.rank() > 2;
    const int64_t k = trans_a_ ? a.dim(0) : a.dim(a.rank() - 1);
    const int64_t m = trans_a_ ? a.dim(1) : (k == 0 ? 0 : a.numel() / k);
    if (k != k_) {
      return layer_error(node_, "A [{}] has K = {} but B has K = {}", dims_to_string(a.dims), k,
                         k_);
    }
    const TensorView& y = out[0];
    if (y.numel() != m * n_ || y.rank() < 1 || y.dim(y.rank() - 1) != n_) {
      return layer_error(node_, "output is [{}] but A x B is {} x {}", dims_to_string(y.dims), m,
                         n_);
    }
    epilogue_.addend_rs = epilogue_.addend_cs = 0;
    epilogue_.addend_scale = beta_;
    residual_ = false;
    if (const TensorView* z = optional_input(in, 3); z != nullptr && op_ == GemmOp::kFusedGemm) {
      KILN_RETURN_IF_ERROR(plan_residual(in, *z, y, m));
    } else if (const TensorView* c = optional_input(in, 2);
               c != nullptr && op_ != GemmOp::kMatMul) {
      const int64_t cn = c->rank() >= 1 ? c->dim(c->rank() - 1) : 1;
      const int64_t cm = c->rank() == 2 ? c->dim(0) : 1;
      if (c->rank() > 2 || (cn != 1 && cn != n_) || (cm != 1 && (cm != m || batched))) {
        return layer_error(node_, "C [{}] does not broadcast to [{}, {}]", dims_to_string(c->dims),
                           batched ? 1 : m, n_);
      }
      epilogue_.addend_cs = cn == 1 ? 0 : 1;
      epilogue_.addend_rs = cm == 1 ? 0 : cn;
    }
    plan_ = (f16_ ? kx::plan_gemm_f16 : kx::plan_gemm)(
        isa_, m, n_, k, trans_a_ ? 1 : k, trans_a_ ? m : 1, n_, pool_threads(thread_pool()));
    scratch_.resize(kx::gemm_scratch_floats(plan_), pool_threads(thread_pool()));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    kx::Epilogue ep = epilogue_;
    if (residual_) {
      ep.addend = input_f32(in, 3);
      if (const float* c = input_f32(in, 2)) {  // beta * C as a bias per column
        for (int64_t j = 0; j < n_; ++j) col_bias_[static_cast<size_t>(j)] = beta_ * c[c_cs_ * j];
        ep.col_bias = col_bias_.data();
      }
    } else if (op_ != GemmOp::kMatMul) {
      ep.addend = input_f32(in, 2);
    }
    const float* a = input_f32(in, 0);
    auto* c = static_cast<float*>(out[0].data);
    auto body = [&](int64_t slot, int64_t b, int64_t e) {
      if (f16_) {
        kx::gemm_run_f16(plan_, a, half_.data(), ep, c, scratch_.slot(slot), b, e);
      } else {
        kx::gemm_run(plan_, a, packed_, ep, c, scratch_.slot(slot), b, e);
      }
    };
    run_tasks(thread_pool(), plan_.tasks, body);
    return Status::ok();
  }

 private:
  // FusedGemm's residual Z (exactly Y's shape) takes the epilogue's addend; C, which must then be
  // one row ([N], [1, N] or a scalar), becomes beta * C per column.
  Status plan_residual(std::span<const TensorView> in, const TensorView& z, const TensorView& y,
                       int64_t m) {
    if (!builtin::same_dims(z, y.dims)) {
      return layer_error(node_, "residual Z [{}] must have exactly the output's shape [{}]",
                         dims_to_string(z.dims), dims_to_string(y.dims));
    }
    residual_ = true;
    epilogue_.addend_rs = n_;
    epilogue_.addend_cs = 1;
    epilogue_.addend_scale = 1.0f;
    if (const TensorView* c = optional_input(in, 2)) {
      const int64_t cn = c->rank() >= 1 ? c->dim(c->rank() - 1) : 1;
      const int64_t cm = c->rank() == 2 ? c->dim(0) : 1;
      if (c->rank() > 2 || (cn != 1 && cn != n_) || (cm != 1 && !(cm == m && m == 1))) {
        return layer_error(node_, "C [{}] is not one row of [{}] (a residual Z is added too)",
                           dims_to_string(c->dims), n_);
      }
      c_cs_ = cn == 1 ? 0 : 1;
      col_bias_.resize(static_cast<size_t>(n_));
    }
    return Status::ok();
  }

  const ir::Node& node_;
  GemmOp op_;
  kx::Isa isa_;
  bool f16_;                     // B packed as binary16 (half_) instead of float32 (packed_)
  bool residual_ = false;        // FusedGemm with Z (plan_residual)
  int64_t c_cs_ = 0;             // C's column stride when it is the column bias
  std::vector<float> col_bias_;  // beta * C, n_ floats, with a residual
  bool trans_a_ = false;
  bool trans_b_ = false;
  float beta_ = 1.0f;
  int64_t k_ = 0, n_ = 0;
  kx::Epilogue epilogue_;          // alpha, C's strides and scale, the activation
  const float* packed_ = nullptr;  // into own_ or the engine's prepacked tensor
  Tensor own_;                     // when the engine has no prepacked B
  std::vector<uint16_t> half_;     // the binary16 panels of an f16w tactic
  kx::GemmPlan plan_;
  ThreadScratch scratch_;
};

std::string_view op_prefix(GemmOp op) {
  return op == GemmOp::kGemm ? "gemm" : op == GemmOp::kMatMul ? "matmul" : "fused_gemm";
}

class X86GemmTactic final : public X86Tactic {
 public:
  X86GemmTactic(GemmOp op, kx::Isa isa, bool f16)
      : X86Tactic(fmt::format("{}.packed.{}", op_prefix(op), f16 ? "f16w" : "f32"),
                  op == GemmOp::kFusedGemm ? "kiln" : "",
                  op == GemmOp::kGemm     ? "Gemm"
                  : op == GemmOp::kMatMul ? "MatMul"
                                          : "FusedGemm",
                  isa),
        op_(op),
        f16_(f16) {}

  std::string why_not(const LayerSpec& spec) const override {
    if (f16_ && !spec.fp16_weights) return "the layer is not fp16 (--fp16 makes it so)";
    return gemm_why_not(spec, op_);
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    auto kernel = std::make_unique<X86GemmKernel>(spec, op_, isa(), f16_);
    KILN_RETURN_IF_ERROR(kernel->set_weights(spec));
    return std::unique_ptr<LayerKernel>(std::move(kernel));
  }
  // The f16w variant packs binary16 panels from the values when it is instantiated.
  std::span<const size_t> packed_inputs() const override {
    if (f16_) return {};
    return kPackedWeightsInput;
  }

  // FP16 layers keep their weights once in the engine, as binary16 (engine/fp16_weights.h): the
  // f16w variant packs at load, and the builder drops any float32 variant's prepacked copy.
  Result<Tensor> prepack(const LayerSpec& spec) const override {
    const Tensor* b = spec.constant(1);
    if (b == nullptr || f16_) return Tensor();
    return pack_b(isa(), *b, op_ != GemmOp::kMatMul && spec.node->attrs.get_int("transB", 0) != 0);
  }

 private:
  GemmOp op_;
  bool f16_;
};

}  // namespace

void append_x86_gemm_tactics(std::vector<const Tactic*>& out) {
  static const std::vector<X86GemmTactic> tactics = [] {
    std::vector<X86GemmTactic> v;
    for (kx::Isa isa : {kx::Isa::kAvx512, kx::Isa::kAvx2}) {
      // f16w first: at optimization level 0 (no timing) an FP16 layer takes its FP16 path.
      for (bool f16 : {true, false}) {
        for (GemmOp op : {GemmOp::kGemm, GemmOp::kMatMul, GemmOp::kFusedGemm})
          v.emplace_back(op, isa, f16);
      }
    }
    return v;
  }();
  for (const X86GemmTactic& t : tactics) out.push_back(&t);
}

}  // namespace kiln::tactics::x86
