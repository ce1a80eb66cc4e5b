// Gemm and MatMul with the blocked GEMM kernel (kernels/cpu/gemm.h). A constant B (the usual
// weights) is packed once when the kernel object is made.
#include "tactics/builtin_gemm.h"

#include <fmt/format.h>

#include "kernels/cpu/gemm.h"
#include "ops/shape_util.h"
#include "tactics/builtin.h"
#include "tactics/builtin_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;

// --- Gemm ----------------------------------------------------------------------------------------

class GemmKernel final : public LayerKernel {
 public:
  GemmKernel(const LayerSpec& spec, const std::optional<cpu::UnaryParams>& activation)
      : node_(*spec.node),
        activation_(activation),
        trans_a_(spec.node->attrs.get_int("transA", 0) != 0),
        trans_b_(spec.node->attrs.get_int("transB", 0) != 0),
        alpha_(spec.node->attrs.get_float("alpha", 1.0f)),
        beta_(spec.node->attrs.get_float("beta", 1.0f)) {
    if (const Tensor* b = spec.constant(1); b != nullptr) {
      const int64_t k = b->dim(trans_b_ ? 1 : 0);
      const int64_t n = b->dim(trans_b_ ? 0 : 1);
      packed_b_.resize(cpu::gemm_packed_b_floats(k, n));
      cpu::gemm_pack_b(b_view(b->data<float>(), k, n), k, n, packed_b_.data());
      b_packed_ = true;
    }
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& a = in[0];
    const TensorView& b = in[1];
    shape_.m = a.dim(trans_a_ ? 1 : 0);
    shape_.k = a.dim(trans_a_ ? 0 : 1);
    shape_.n = b.dim(trans_b_ ? 0 : 1);
    shape_.alpha = alpha_;
    shape_.ldy = shape_.n;
    if (b.dim(trans_b_ ? 1 : 0) != shape_.k) {
      return layer_error(node_, "A [{}] and B [{}] do not multiply", dims_to_string(a.dims),
                         dims_to_string(b.dims));
    }
    const Dims y{shape_.m, shape_.n};
    if (!same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but A x B is [{}]", dims_to_string(out[0].dims),
                         dims_to_string(y));
    }
    KILN_RETURN_IF_ERROR(plan_c(optional_input(in, 2)));
    set_activation();
    scratch_.resize(cpu::gemm_scratch_floats(shape_, false, b_packed_));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const cpu::GemmOperand a{a_view(input_f32(in, 0)), nullptr};
    const cpu::GemmOperand b{
        b_packed_ ? cpu::MatrixRef{} : b_view(input_f32(in, 1), shape_.k, shape_.n),
        b_packed_ ? packed_b_.data() : nullptr};
    cpu::GemmEpilogue ep = epilogue_;
    ep.addend = input_f32(in, 2);
    cpu::gemm(shape_, a, b, static_cast<float*>(out[0].data), ep, scratch_.data());
    return Status::ok();
  }

 private:
  cpu::MatrixRef a_view(const float* a) const {
    return trans_a_ ? cpu::MatrixRef{a, 1, shape_.m} : cpu::MatrixRef{a, shape_.k, 1};
  }
  cpu::MatrixRef b_view(const float* b, int64_t k, int64_t n) const {
    return trans_b_ ? cpu::MatrixRef{b, 1, k} : cpu::MatrixRef{b, n, 1};
  }

  // C (rank 0 to 2) broadcast to [m, n]: the addend's strides, 0 along broadcast axes.
  Status plan_c(const TensorView* c) {
    epilogue_ = cpu::GemmEpilogue{};
    if (c == nullptr) return Status::ok();
    const int64_t cn = c->rank() >= 1 ? c->dim(c->rank() - 1) : 1;
    const int64_t cm = c->rank() == 2 ? c->dim(0) : 1;
    if (c->rank() > 2 || (cn != 1 && cn != shape_.n) || (cm != 1 && cm != shape_.m)) {
      return layer_error(node_, "C [{}] does not broadcast to [{}, {}]", dims_to_string(c->dims),
                         shape_.m, shape_.n);
    }
    epilogue_.addend_cs = cn == 1 ? 0 : 1;
    epilogue_.addend_rs = cm == 1 ? 0 : cn;
    epilogue_.addend_scale = beta_;
    return Status::ok();
  }

  // The activation survives plan_c(), which resets the epilogue.
  void set_activation() {
    if (!activation_) return;
    epilogue_.activate = cpu::activate_unary;
    epilogue_.activate_ctx = &*activation_;
  }

  const ir::Node& node_;
  std::optional<cpu::UnaryParams> activation_;
  bool trans_a_;
  bool trans_b_;
  float alpha_;
  float beta_;
  cpu::GemmShape shape_;
  cpu::GemmEpilogue epilogue_;  // C's strides and scale; the pointer is set per run
  bool b_packed_ = false;
  FloatBuffer packed_b_;
  FloatBuffer scratch_;
};

class GemmTactic final : public BuiltinTactic {
 public:
  GemmTactic() : BuiltinTactic("gemm.blocked.f32", "Gemm") {}
  std::string why_not(const LayerSpec& spec) const override { return gemm_why_not(spec); }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return make_gemm_kernel(spec, std::nullopt);
  }
};

// --- MatMul --------------------------------------------------------------------------------------

// The matrix dims of a MatMul operand and its batch dims (numpy: 1-D operands are promoted).
struct Operand {
  Dims batch;
  int64_t rows = 1;
  int64_t cols = 1;
};
Operand split(std::span<const int64_t> d, bool is_a) {
  Operand o;
  const size_t r = d.size();
  if (r == 1) {
    (is_a ? o.cols : o.rows) = d[0];
    return o;
  }
  o.batch.assign(d.begin(), d.end() - 2);
  o.rows = d[r - 2];
  o.cols = d[r - 1];
  return o;
}

// Index of the operand matrix (in `batch`, right-aligned and broadcast) for each output matrix.
std::vector<int64_t> batch_indices(const Dims& batch, const Dims& out) {
  std::vector<int64_t> idx(static_cast<size_t>(dims_numel(out)), 0);
  const size_t off = out.size() - batch.size();
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i);
    int64_t v = 0;
    int64_t stride = 1;
    for (size_t k = out.size(); k-- > 0;) {
      const int64_t c = rem % out[k];
      rem /= out[k];
      if (k < off) continue;
      const int64_t d = batch[k - off];
      if (d != 1) v += c * stride;
      stride *= d;
    }
    idx[i] = v;
  }
  return idx;
}

class MatMulKernel final : public LayerKernel {
 public:
  explicit MatMulKernel(const LayerSpec& spec) : node_(*spec.node) {
    const Tensor* b = spec.constant(1);
    if (b == nullptr) return;
    const Operand ob = split(b->dims(), false);
    const int64_t count = dims_numel(ob.batch);
    b_matrix_floats_ = cpu::gemm_packed_b_floats(ob.rows, ob.cols);
    packed_b_.resize(static_cast<size_t>(count) * b_matrix_floats_);
    for (int64_t i = 0; i < count; ++i) {
      cpu::gemm_pack_b(cpu::MatrixRef{b->data<float>() + i * ob.rows * ob.cols, ob.cols, 1},
                       ob.rows, ob.cols, packed_b_.data() + i * b_matrix_floats_);
    }
    b_packed_ = true;
  }

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const Operand a = split(in[0].dims, true);
    const Operand b = split(in[1].dims, false);
    const std::optional<Dims> batch = ops::broadcast_dims(a.batch, b.batch);
    if (a.cols != b.rows || !batch) {
      return layer_error(node_, "A [{}] and B [{}] do not multiply", dims_to_string(in[0].dims),
                         dims_to_string(in[1].dims));
    }
    Dims y = *batch;
    if (in[0].rank() >= 2) y.push_back(a.rows);
    if (in[1].rank() >= 2) y.push_back(b.cols);
    if (!same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but A x B is [{}]", dims_to_string(out[0].dims),
                         dims_to_string(y));
    }
    shape_ = cpu::GemmShape{a.rows, b.cols, a.cols, 1.0f, b.cols};
    if (dims_numel(b.batch) == 1) {
      // One B for every batch: A's matrices stacked are one tall matrix.
      shape_.m *= dims_numel(*batch);
      a_index_.assign(1, 0);
      b_index_.assign(1, 0);
    } else {
      a_index_ = batch_indices(a.batch, *batch);
      b_index_ = batch_indices(b.batch, *batch);
    }
    scratch_.resize(cpu::gemm_scratch_floats(shape_, false, b_packed_));
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const float* a = input_f32(in, 0);
    const float* b = input_f32(in, 1);
    auto* y = static_cast<float*>(out[0].data);
    const int64_t m = shape_.m;
    const int64_t n = shape_.n;
    const int64_t k = shape_.k;
    for (size_t i = 0; i < a_index_.size(); ++i) {
      const cpu::GemmOperand ao{cpu::MatrixRef{a + a_index_[i] * m * k, k, 1}, nullptr};
      cpu::GemmOperand bo;
      if (b_packed_) {
        bo.packed = packed_b_.data() + static_cast<size_t>(b_index_[i]) * b_matrix_floats_;
      } else {
        bo.view = cpu::MatrixRef{b + b_index_[i] * k * n, n, 1};
      }
      cpu::gemm(shape_, ao, bo, y + static_cast<int64_t>(i) * m * n, cpu::GemmEpilogue{},
                scratch_.data());
    }
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  cpu::GemmShape shape_;
  std::vector<int64_t> a_index_;  // per output matrix: which A matrix
  std::vector<int64_t> b_index_;  // and which B matrix
  bool b_packed_ = false;
  size_t b_matrix_floats_ = 0;
  FloatBuffer packed_b_;
  FloatBuffer scratch_;
};

class MatMulTactic final : public BuiltinTactic {
 public:
  MatMulTactic() : BuiltinTactic("matmul.blocked.f32", "MatMul") {}
  std::string why_not(const LayerSpec& spec) const override {
    std::string why = require_f32(spec);
    if (why.empty()) why = require_rank(spec, 0, 1, 64);
    if (why.empty()) why = require_rank(spec, 1, 1, 64);
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new MatMulKernel(spec));
  }
};

}  // namespace

std::string gemm_why_not(const LayerSpec& spec) {
  std::string why = require_f32(spec);
  if (why.empty()) why = require_rank(spec, 0, 2, 2);
  if (why.empty()) why = require_rank(spec, 1, 2, 2);
  if (why.empty() && spec.has_input(2)) why = require_rank(spec, 2, 0, 2);
  return why;
}

Result<std::unique_ptr<LayerKernel>> make_gemm_kernel(
    const LayerSpec& spec, const std::optional<cpu::UnaryParams>& activation) {
  return std::unique_ptr<LayerKernel>(new GemmKernel(spec, activation));
}

void append_gemm_tactics(std::vector<const Tactic*>& out) {
  static const GemmTactic gemm;
  static const MatMulTactic matmul;
  out.push_back(&gemm);
  out.push_back(&matmul);
}

}  // namespace kiln::tactics::builtin
