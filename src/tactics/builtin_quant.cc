// kiln.QConv and kiln.QGemm on portable kernels: the exact int32 sums of kernels/cpu/qconv.h,
// then the reference epilogue (kernels/ref/qconv.h) over each run of sums. The INT8 path of any
// x86 CPU (and of a KILN_MAX_ISA below AVX2); no allocation in run().
#include <fmt/format.h>

#include <algorithm>

#include "kernels/cpu/qconv.h"
#include "parallel/thread_pool.h"
#include "tactics/builtin.h"
#include "tactics/builtin_conv.h"
#include "tactics/builtin_util.h"
#include "tactics/quant_util.h"

namespace kiln::tactics::builtin {
namespace {

namespace cpu = kernels::cpu;
namespace ref = kernels::ref;

// fn(part, begin, end) over [0, tasks) split into at most one contiguous part per thread (part:
// the scratch slot).
template <typename F>
void run_parts(parallel::ThreadPool* pool, int64_t tasks, F&& fn) {
  const int64_t parts = std::min<int64_t>(pool == nullptr ? 1 : pool->size(), tasks);
  if (parts <= 1) {
    if (tasks > 0) fn(int64_t{0}, int64_t{0}, tasks);
    return;
  }
  parallel::parallel_for(pool, parts, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) fn(s, s * tasks / parts, (s + 1) * tasks / parts);
  });
}

// int32 accumulators per thread, sized in reshape().
class AccScratch {
 public:
  void resize(int64_t per_thread, parallel::ThreadPool* pool) {
    stride_ = std::max<int64_t>(per_thread, 1);
    const int threads = pool == nullptr ? 1 : pool->size();
    data_.assign(static_cast<size_t>(stride_ * threads), 0);
  }
  int32_t* slot(int64_t i) { return data_.data() + i * stride_; }

 private:
  std::vector<int32_t> data_;
  int64_t stride_ = 0;
};

// --- QConv ---------------------------------------------------------------------------------------

class PortableQConvKernel final : public LayerKernel {
 public:
  PortableQConvKernel(const LayerSpec& spec, ref::QuantEpilogue e)
      : node_(*spec.node), since_version_(spec.since_version), epilogue_(e) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    KILN_ASSIGN_OR_RETURN(p_, conv2d_params(node_, since_version_, in[0], in[1]));
    const Dims x = dims_of(in[0]);
    Dims y{p_.batch, p_.out_c};
    for (size_t d = 2; d < x.size(); ++d) y.push_back(d + 1 == x.size() ? p_.out_w : p_.out_h);
    if (!same_dims(out[0], y)) {
      return layer_error(node_, "output is [{}] but the convolution gives [{}]",
                         dims_to_string(out[0].dims), dims_to_string(y));
    }
    if (const TensorView* z = optional_input(in, kQuantResidualInput); z && !same_dims(*z, y)) {
      return layer_error(node_, "residual is [{}] but the output is [{}]", dims_to_string(z->dims),
                         dims_to_string(y));
    }
    acc_.resize(p_.out_h * p_.out_w, thread_pool());
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    ref::QuantEpilogue e = epilogue_;
    bind_quant_inputs(e, in);
    const auto* x = static_cast<const uint8_t*>(in[0].data);
    const auto* w = static_cast<const int8_t*>(in[1].data);
    const int64_t plane = p_.out_h * p_.out_w, in_image = p_.in_c * p_.in_h * p_.in_w;
    const int64_t w_channel = p_.in_c / p_.group * p_.k_h * p_.k_w;
    auto body = [&](int64_t slot, int64_t begin, int64_t end) {
      int32_t* acc = acc_.slot(slot);
      for (int64_t t = begin; t < end; ++t) {  // t = (image, output channel)
        const int64_t b = t / p_.out_c, m = t % p_.out_c;
        cpu::qconv2d_channel_acc(p_, x + b * in_image, e.in_zero, w + m * w_channel, m, acc);
        ref::quant_epilogue(e, acc, plane, t * plane, m, 0, out[0].data);
      }
    };
    run_parts(thread_pool(), p_.batch * p_.out_c, body);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  int since_version_;
  ref::QuantEpilogue epilogue_;
  cpu::Conv2DParams p_;
  AccScratch acc_;
};

class PortableQConvTactic final : public BuiltinTactic {
 public:
  PortableQConvTactic() : BuiltinTactic("qconv.portable.u8s8", "QConv") {}
  std::string_view domain() const override { return "kiln"; }

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = quant_why_not(spec);
    const ir::TensorDesc& x = spec.inputs[0];
    if (why.empty() && (!x.has_rank() || (x.rank() != 3 && x.rank() != 4))) {
      why = fmt::format("input 0 is {}: this tactic runs 1-D and 2-D convolutions", x.to_string());
    }
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, quant_epilogue_of(spec));
    return std::unique_ptr<LayerKernel>(new PortableQConvKernel(spec, e));
  }
};

// --- QGemm ---------------------------------------------------------------------------------------

class PortableQGemmKernel final : public LayerKernel {
 public:
  PortableQGemmKernel(const LayerSpec& spec, ref::QuantEpilogue e)
      : node_(*spec.node), epilogue_(e) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    const TensorView& a = in[0];
    k_ = in[1].dim(0);
    n_ = in[1].dim(1);
    if (a.dim(a.rank() - 1) != k_) {
      return layer_error(node_, "A [{}] has K = {} but B has K = {}", dims_to_string(a.dims),
                         a.dim(a.rank() - 1), k_);
    }
    m_ = k_ == 0 ? 0 : a.numel() / k_;
    if (out[0].numel() != m_ * n_) {
      return layer_error(node_, "output is [{}] but A x B is {} x {}", dims_to_string(out[0].dims),
                         m_, n_);
    }
    acc_.resize(n_, thread_pool());
    return Status::ok();
  }

  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    ref::QuantEpilogue e = epilogue_;
    bind_quant_inputs(e, in);
    const auto* a = static_cast<const uint8_t*>(in[0].data);
    const auto* b = static_cast<const int8_t*>(in[1].data);
    auto body = [&](int64_t slot, int64_t begin, int64_t end) {
      int32_t* acc = acc_.slot(slot);
      for (int64_t i = begin; i < end; ++i) {
        cpu::qgemm_row_acc(k_, n_, a + i * k_, e.in_zero, b, acc);
        ref::quant_epilogue(e, acc, n_, i * n_, 0, 1, out[0].data);
      }
    };
    run_parts(thread_pool(), m_, body);
    return Status::ok();
  }

 private:
  const ir::Node& node_;
  ref::QuantEpilogue epilogue_;
  int64_t m_ = 0, k_ = 0, n_ = 0;
  AccScratch acc_;
};

class PortableQGemmTactic final : public BuiltinTactic {
 public:
  PortableQGemmTactic() : BuiltinTactic("qgemm.portable.u8s8", "QGemm") {}
  std::string_view domain() const override { return "kiln"; }

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = quant_why_not(spec);
    if (why.empty() && (spec.constant(1)->rank() != 2 || !spec.inputs[0].has_rank() ||
                        spec.inputs[0].rank() < 2)) {
      why = fmt::format("A is {} and B {}: rank >= 2 and a 2-D B expected",
                        spec.inputs[0].to_string(), spec.constant(1)->desc());
    }
    return why;
  }

  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, quant_epilogue_of(spec));
    return std::unique_ptr<LayerKernel>(new PortableQGemmKernel(spec, e));
  }
};

}  // namespace

void append_quant_tactics(std::vector<const Tactic*>& out) {
  static const PortableQConvTactic qconv;
  static const PortableQGemmTactic qgemm;
  out.push_back(&qconv);
  out.push_back(&qgemm);
}

}  // namespace kiln::tactics::builtin
