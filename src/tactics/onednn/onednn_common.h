#pragma once
// What the oneDNN tactics share: the CPU engine, the OpenMP thread scope, plain memory
// descriptors, activation post-ops, weight packing, and a primitive run without allocating.
//
// Threads: Debian builds oneDNN with the OpenMP runtime (DNNL_CPU_RUNTIME == OMP), so a primitive
// runs on libgomp's threads, not on kiln's pool. A kernel asks for as many OpenMP threads as its
// context's pool has (1 without a pool) around primitive creation (oneDNN sizes its work split
// then) and execution, and restores the caller's setting after; kiln's pool workers sleep while a
// oneDNN layer runs, so the two never oversubscribe the cores.

#include <dnnl.hpp>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor_view.h"
#include "kernels/ref/activation.h"
#include "tactics/tactic.h"

namespace kiln::tactics::onednn {

// A tactic for one op with a fixed name in the "onednn" source.
class OnednnTactic : public Tactic {
 public:
  OnednnTactic(std::string_view name, std::string_view domain, std::string_view op_type)
      : name_(name), domain_(domain), op_(op_type) {}
  std::string_view name() const override { return name_; }
  std::string_view source() const override { return "onednn"; }
  bool runs_own_threads() const override { return true; }
  // oneDNN 2.6's execute() heap-allocates: its argument map, and per work item in the gemm-based
  // convolution (growing with the layer), so the hot path is allocation-free only without it.
  bool allocates() const override { return true; }
  std::string_view domain() const override { return domain_; }
  std::string_view op_type() const override { return op_; }

 private:
  std::string_view name_, domain_, op_;
};

const dnnl::engine& cpu_engine();

// The OpenMP thread count of the calling thread set to the pool's size (1 for none) for the
// scope's lifetime.
class OmpThreads {
 public:
  explicit OmpThreads(const parallel::ThreadPool* pool);
  ~OmpThreads();
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int previous_;
};

// --- why_not helpers -----------------------------------------------------------------------------
// "" when every present input and output is float32, else which one is not.
std::string require_f32(const LayerSpec& spec);
// "" when input i is present with a known rank in [min_rank, max_rank].
std::string require_rank(const LayerSpec& spec, size_t i, int min_rank, int max_rank);
// The node's kiln activation (attributes "activation", "activation_params"); kNone when absent.
kernels::ref::ActivationParams activation_of(const ir::Node& node);
// "" when the activation attributes name an activation these tactics express as post-ops.
std::string activation_why_not(const ir::Node& node);
// Appends the eltwise post-op(s) computing `act` (nothing for kNone).
void append_activation(const kernels::ref::ActivationParams& act, dnnl::post_ops& ops);

// --- descriptors ---------------------------------------------------------------------------------
// x's dims when they are all known; with any_batch, an unknown leading dim (a dynamic batch) is
// taken as 1. nullopt otherwise.
std::optional<Dims> known_dims(const ir::TensorDesc& x, bool any_batch);
dnnl::memory::dims to_dims(std::span<const int64_t> dims);
// A convolution's end padding along one axis that gives exactly `out` outputs (ONNX's attribute
// may pad more than the last window uses; oneDNN wants the exact figure).
inline int64_t exact_end_pad(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                             int64_t dilation, int64_t pad_begin) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - in - pad_begin;
}
// Row-major float32 of `dims`.
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims);
// Float32 `dims` with explicit strides (a transposed matrix).
dnnl::memory::desc strided_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides);

// An error naming the node, for shapes a primitive cannot take or a oneDNN failure.
Status layer_status(const ir::Node& node, std::string_view what);
Status layer_status(const ir::Node& node, const dnnl::error& e);

// --- weights -------------------------------------------------------------------------------------
// Constant weights reordered into the layout a primitive asked for. pack() depends only on the
// weights' values, their source layout and the target descriptor, so the engine packs them when
// it is built (Tactic::prepack, stored_weights) and every context uses its copy (adopt).
class PackedWeights {
 public:
  // Reorders `weights` (laid out as `from`) into `to`; a no-op when already packed as `to`.
  Status pack(const void* weights, const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  // Takes an engine's packed weights (stored_weights): in place when they are laid out as `to`,
  // else reordered from their layout into a buffer of its own. Refused when the bytes are not
  // packed weights of this oneDNN version.
  Status adopt(const Tensor& stored, const dnnl::memory::desc& to);
  bool packed_as(const dnnl::memory::desc& to) const { return data_.defined() && desc_ == to; }
  void* data() const { return const_cast<void*>(data_.raw_data()); }

 private:
  dnnl::memory::desc desc_;
  Tensor data_;  // 64-byte aligned bytes, owned or a view of the engine's
};

// `weights` (laid out as `from`) packed as `to` the way an engine stores them: a 64-byte-aligned
// header (oneDNN's version, `to`'s descriptor) and the bytes. Empty when `to` is not a blocked
// layout: a Winograd layout can change with the thread count and no reorder reads it back, so
// those weights stay per context.
Result<Tensor> stored_weights(const void* weights, const dnnl::memory::desc& from,
                              const dnnl::memory::desc& to);
// Refuses, naming the node, an engine's packed weights that are not stored_weights of this
// oneDNN, so that instantiate() reports a foreign engine before any primitive is made.
Status check_stored_weights(const ir::Node& node, const Tensor& stored);

// --- execution -----------------------------------------------------------------------------------
// A primitive and its arguments, built in reshape(): run() rebinds data pointers and executes
// through the C API with a fixed argument array (the C++ execute() takes a std::unordered_map).
class Exec {
 public:
  // Takes the primitive, makes a user scratchpad of the size it asks for and a stream; forgets
  // the arguments of a previous init().
  void init(dnnl::primitive prim, const dnnl::memory::desc& scratchpad);
  // Adds argument `arg` of `md`; returns its slot for bind().
  int add(int arg, const dnnl::memory::desc& md);
  void bind(int slot, const void* data);
  Status execute();

 private:
  dnnl::primitive prim_;
  dnnl::stream stream_;
  Tensor scratchpad_;
  std::vector<dnnl::memory> mems_;
  std::vector<dnnl_exec_arg_t> args_;
};

// A primitive_attr with the user scratchpad mode every kernel uses.
dnnl::primitive_attr base_attr();

}  // namespace kiln::tactics::onednn
