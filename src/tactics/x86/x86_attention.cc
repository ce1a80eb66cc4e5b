// kiln.Attention on kiln's x86 GEMM and softmax (kernels/x86/kernels.h). A task is one block of
// rows of one batch matrix: it computes its scores into the thread's scratch, normalises them and
// multiplies them by V' into the result's rows, the scores never leaving the core's cache; a mask
// is added in the scores' epilogue. K' and
// V' are packed into GEMM panels read through the operands' strides, so the heads' transposes the
// pass absorbed cost no copy of their own.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "base/int_math.h"
#include "kernels/ref/attention.h"
#include "ops/kiln_fused.h"
#include "tactics/builtin_util.h"
#include "tactics/x86/x86_common.h"

namespace kiln::tactics::x86 {
namespace {

namespace ref = kernels::ref;
using builtin::layer_error;

// A block's scores stay within 128 KiB (an eighth of L2) while they are normalised and multiplied.
constexpr int64_t kScoreBlockFloats = 32 * 1024;
// Up to this many keys, the product with V runs over all of them in one depth block.
constexpr int64_t kWholeKeysMax = 256;

// The rows of a task (a multiple of the tile's mr, or all s rows) that balance `threads` best when
// run_tasks hands out batches x blocks tasks in contiguous parts. In rows' worth of work, a task
// costs its row tiles plus one (packing its rows of Q, loading the K' and V' panels again), and
// each batch matrix a part reaches two more (packing its K' and V').
int64_t block_rows(int64_t s, int64_t t, int64_t batches, int64_t mr, int threads) {
  const int64_t max_rows = std::max(mr, kScoreBlockFloats / std::max<int64_t>(t, 1) / mr * mr);
  int64_t best = 0, best_cost = std::numeric_limits<int64_t>::max();
  for (int64_t rows = std::min(round_up(s, mr), max_rows); rows >= mr; rows -= mr) {
    const int64_t blocks = ceil_div(s, rows), tasks = batches * blocks;
    const int64_t parts = std::min<int64_t>(threads, tasks);
    int64_t worst = 0;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t begin = p * tasks / parts, end = (p + 1) * tasks / parts;
      int64_t sum = (ceil_div(end, blocks) - begin / blocks) * 2 * mr;
      for (int64_t i = begin; i < end; ++i) {
        sum += round_up(std::min(rows, s - i % blocks * rows), mr) + mr;
      }
      worst = std::max(worst, sum);
    }
    if (worst < best_cost) {
      best = rows;
      best_cost = worst;
    }
  }
  return std::max(best, mr);
}

class X86AttentionKernel final : public LayerKernel {
 public:
  X86AttentionKernel(const LayerSpec& spec, kx::Isa isa)
      : node_(*spec.node),
        isa_(isa),
        perms_(ops::attention_perms(node_.attrs)),
        scale_(node_.attrs.get_float("scale", 1.0f)) {}

  Status reshape(std::span<const TensorView> in, std::span<const TensorView> out) override {
    std::string error;
    const TensorView* mask = builtin::optional_input(in, 3);
    const Dims mask_dims = mask != nullptr ? builtin::dims_of(*mask) : Dims{};
    std::optional<ref::AttentionShape> shape = ref::attention_shape(
        builtin::dims_of(in[0]), builtin::dims_of(in[1]), builtin::dims_of(in[2]), perms_, error,
        mask != nullptr ? &mask_dims : nullptr);
    if (!shape) return layer_error(node_, "{}", error);
    if (!builtin::same_dims(out[0], shape->y_dims)) {
      return layer_error(node_, "output [{}] is not the result's [{}]", dims_to_string(out[0].dims),
                         fmt::join(shape->y_dims, ","));
    }
    if (shape->y.cs != 1 && shape->dv > 1) {
      return layer_error(node_, "perm_y moves the result's last axis: its rows are not contiguous");
    }
    a_ = std::move(*shape);
    const int threads = pool_threads(thread_pool());
    const int64_t mr = kx::blocking(isa_).mr;
    rows_ = block_rows(a_.s, a_.t, a_.batches(), mr, threads);
    blocks_ = a_.s == 0 ? 0 : ceil_div(a_.s, rows_);
    size_t gemm_scratch = 0;
    for (int tail = 0; tail < 2; ++tail) {
      const int64_t rows = tail == 0 ? rows_ : a_.s - (blocks_ - 1) * rows_;
      scores_[tail] = kx::plan_gemm(isa_, rows, a_.t, a_.d, a_.q.rs, a_.q.cs, a_.t, 1);
      values_[tail] = kx::plan_gemm(isa_, rows, a_.dv, a_.t, a_.t, 1, a_.y.rs, 1);
      // The keys in one depth block: each result tile is stored once (a sequence of 197 would run
      // as two blocks of 99 and 98, reloading the tile), its V' panel (t x nr) still within L1.
      if (a_.t <= kWholeKeysMax) values_[tail].bl.kc = std::max<int64_t>(a_.t, 1);
      gemm_scratch = std::max({gemm_scratch, kx::gemm_scratch_floats(scores_[tail]),
                               kx::gemm_scratch_floats(values_[tail])});
    }
    // Per thread: a block's scores, one batch matrix's K' and V' panels, the GEMMs' A panels.
    score_floats_ = static_cast<size_t>(round_up(rows_ * a_.t, 16));
    k_floats_ = static_cast<size_t>(round_up(kx::gemm_packed_b_floats(isa_, a_.d, a_.t), 16));
    v_floats_ = static_cast<size_t>(round_up(kx::gemm_packed_b_floats(isa_, a_.t, a_.dv), 16));
    scratch_.resize(score_floats_ + k_floats_ + v_floats_ + gemm_scratch, threads);
    return Status::ok();
  }

  // Tasks go batch-major in contiguous parts, so each thread packs the K' and V' of each batch
  // matrix it reaches once, into its own scratch (no barrier, and the panels stay in the core's
  // cache); only the batches two parts share are packed twice, and a K' or V' that consecutive
  // batches share (broadcast) only once.
  Status run(std::span<const TensorView> in, std::span<const TensorView> out) override {
    if (a_.batches() == 0 || a_.s == 0 || a_.dv == 0) return Status::ok();
    const auto* q = static_cast<const float*>(in[0].data);
    const auto* k = static_cast<const float*>(in[1].data);
    const auto* v = static_cast<const float*>(in[2].data);
    const float* mask = builtin::input_f32(in, 3);
    auto* y = static_cast<float*>(out[0].data);
    const kx::Epilogue plain;
    run_tasks(thread_pool(), a_.batches() * blocks_, [&](int64_t slot, int64_t b, int64_t e) {
      float* scores = scratch_.slot(slot);
      float* packed_k = scores + score_floats_;
      float* packed_v = packed_k + k_floats_;
      float* gemm_scratch = packed_v + v_floats_;
      int64_t k_at = -1, v_at = -1;  // the matrices the panels hold (offsets)
      for (int64_t task = b; task < e; ++task) {
        const auto batch = static_cast<size_t>(task / blocks_);
        if (a_.k_offset[batch] != k_at) {  // heads sharing K (multi-query) pack it once
          k_at = a_.k_offset[batch];
          kx::gemm_pack_b(isa_, k + k_at, a_.k.rs, a_.k.cs, a_.d, a_.t, packed_k);
        }
        if (a_.v_offset[batch] != v_at) {
          v_at = a_.v_offset[batch];
          kx::gemm_pack_b(isa_, v + v_at, a_.v.rs, a_.v.cs, a_.t, a_.dv, packed_v);
        }
        const int64_t row0 = task % blocks_ * rows_;
        const int tail = row0 + rows_ > a_.s ? 1 : 0;
        const int64_t rows = std::min(rows_, a_.s - row0);
        kx::gemm_run(scores_[tail], q + a_.q_offset[batch] + row0 * a_.q.rs, packed_k,
                     score_epilogue(mask, batch, row0), scores, gemm_scratch, 0,
                     scores_[tail].tasks);
        kx::softmax_rows(isa_, rows, a_.t, scores, scores);
        kx::gemm_run(values_[tail], scores, packed_v, plain,
                     y + a_.y_offset[batch] + row0 * a_.y.rs, gemm_scratch, 0, values_[tail].tasks);
      }
    });
    return Status::ok();
  }

 private:
  // scale * (Q' @ K') + the mask's rows [row0, row0 + rows) of batch matrix `batch`.
  kx::Epilogue score_epilogue(const float* mask, size_t batch, int64_t row0) const {
    kx::Epilogue ep;
    ep.alpha = scale_;
    if (a_.masked) {
      ep.addend = mask + a_.m_offset[batch] + row0 * a_.m.rs;
      ep.addend_rs = a_.m.rs;
      ep.addend_cs = a_.m.cs;
    }
    return ep;
  }

  const ir::Node& node_;
  kx::Isa isa_;
  ref::AttentionPerms perms_;
  float scale_;
  ref::AttentionShape a_;
  int64_t rows_ = 0, blocks_ = 0;
  kx::GemmPlan scores_[2], values_[2];  // a block of rows_ rows, and the last block of a matrix
  size_t score_floats_ = 0, k_floats_ = 0, v_floats_ = 0;
  ThreadScratch scratch_;
};

class X86AttentionTactic final : public X86Tactic {
 public:
  explicit X86AttentionTactic(kx::Isa isa) : X86Tactic("attention.f32", "kiln", "Attention", isa) {}

  std::string why_not(const LayerSpec& spec) const override {
    std::string why = builtin::require_f32(spec);
    const std::vector<int64_t> perm_y = spec.node->attrs.get_ints("perm_y");
    if (why.empty() && !perm_y.empty() &&
        perm_y.back() != static_cast<int64_t>(perm_y.size()) - 1) {
      why = "perm_y moves the result's last axis: its rows are not contiguous";
    }
    return why;
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(new X86AttentionKernel(spec, isa()));
  }
};

}  // namespace

void append_x86_attention_tactics(std::vector<const Tactic*>& out) {
  static const X86AttentionTactic avx512(kx::Isa::kAvx512), avx2(kx::Isa::kAvx2);
  out.insert(out.end(), {&avx512, &avx2});
}

}  // namespace kiln::tactics::x86
