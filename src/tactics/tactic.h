#pragma once
// A tactic is one way to run one layer: an implementation with a stable name
// ("conv.direct.f32", "ref.generic"), the conditions under which it applies, the CPU features it
// needs, and a factory for the per-context kernel object that runs it.
//
// The split follows TensorRT's object model: the engine is immutable and shared; what a tactic
// needs at run time that depends on shapes or owns scratch lives in a LayerKernel, one per
// ExecutionContext, so several contexts run one engine from several threads without locks.
//
// Lifecycle of a LayerKernel:
//   instantiate(spec)  once per context, may allocate
//   reshape(in, out)   whenever input shapes change (not the hot path), may allocate
//   run(in, out)       the hot path: no allocation (unless allocates() says otherwise), no
//                      validation beyond what shapes alone cannot rule out
//
// Views passed to reshape() and run() have concrete dims; run() gets the same dims reshape() saw,
// but its data pointers may differ from call to call (users rebind their buffers).

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor_view.h"
#include "ir/graph.h"
#include "parallel/thread_pool.h"

namespace kiln::tactics {

// What a tactic sees of a layer: the node (attributes, op, domain), its inputs' and outputs' descs
// (dims may be symbolic: the engine is built for ranges of shapes), and the value of every
// constant input (weights).
struct LayerSpec {
  const ir::Node* node = nullptr;
  int since_version = 0;
  std::vector<ir::TensorDesc> inputs;  // kAbsent dtype for an omitted optional input
  std::vector<ir::TensorDesc> outputs;
  std::vector<const Tensor*> constants;  // per input: its value when constant, else nullptr
  // The tactic's prepack() result stored in the engine (null when it has none, or when a test
  // instantiates the tactic directly: then instantiate() packs for itself).
  const Tensor* prepacked = nullptr;
  // The builder made this an FP16 layer (--fp16): its constant weights hold values rounded to
  // binary16. Tactics with an FP16 path (the x86 GEMM's *.f16w.*) store and read them as binary16;
  // any other tactic runs them as the float32 values they are, with the same numerics.
  bool fp16_weights = false;

  bool has_input(size_t i) const {
    return i < node->inputs.size() && node->inputs[i] != ir::kNoValue;
  }
  const Tensor* constant(size_t i) const { return i < constants.size() ? constants[i] : nullptr; }
};

class LayerKernel {
 public:
  virtual ~LayerKernel() = default;
  virtual Status reshape(std::span<const TensorView> inputs, std::span<const TensorView> outputs) {
    return Status::ok();
  }
  virtual Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs) = 0;

  // The context's pool that run() may split its work on; null (the default) means the calling
  // thread only. Set once after instantiate(), before the first reshape().
  void set_thread_pool(parallel::ThreadPool* pool) { pool_ = pool; }

 protected:
  parallel::ThreadPool* thread_pool() const { return pool_; }

 private:
  parallel::ThreadPool* pool_ = nullptr;
};

class Tactic {
 public:
  virtual ~Tactic() = default;
  // Stable: stored in engines, accepted by --tactics, shown by inspect.
  virtual std::string_view name() const = 0;
  // Where the implementation comes from ("kiln": kiln's own kernels, "onednn", "ref": the
  // reference fallback); --tacticSources enables and disables sources by this name.
  virtual std::string_view source() const { return "kiln"; }
  // The op this tactic implements ("" domain = ONNX); "*" for the generic reference fallback.
  virtual std::string_view domain() const { return ""; }
  virtual std::string_view op_type() const = 0;
  // The CPU features run() needs, as a CpuFeatureSet bitmask (base/cpu_features.h).
  virtual uint64_t required_features() const { return 0; }
  // True when run() runs on threads of its own instead of the context's pool (oneDNN's primitives
  // start OpenMP regions): the context then runs the layer outside the pool's segments
  // (ThreadPool::run_segment), where such regions would nest and run on one thread.
  virtual bool runs_own_threads() const { return false; }
  // True when run() may heap-allocate (the reference fallback, oneDNN's primitives). Shown by
  // inspect; --tacticSources=-onednn gives an allocation-free hot path.
  virtual bool allocates() const { return false; }
  // True when run() stays correct with kiln.FusedConv's residual (input 3) in output 0's own
  // buffer: the engine then gives the output the residual's bytes when the residual dies there
  // (engine/memory_layout.cc), saving a stream of reads and a buffer.
  virtual bool residual_in_place() const { return false; }
  // True when output 0 is input 0's bytes unchanged (Reshape, Flatten, Squeeze) and run() copies
  // nothing when both are one buffer: the engine gives the output the input's bytes when the input
  // dies at this layer (engine/memory_layout.cc).
  virtual bool output_is_input() const { return false; }
  // Empty when the tactic can run the layer; otherwise why not ("group convolution", "float16").
  virtual std::string why_not(const LayerSpec& spec) const = 0;
  virtual Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const = 0;
  // Constant weights rearranged the way run() reads them (GEMM panels, reordered filters), made
  // once when the engine is built and stored in it, so that loading does no work and every context
  // shares one copy. An empty tensor (the default) means the tactic reads the weights as they are.
  // A pure function of the layer's constants: the builder packs several layers at once.
  virtual Result<Tensor> prepack(const LayerSpec& spec) const { return Tensor(); }
  // The constant inputs that a non-empty prepack() result replaces: with it, the kernels read only
  // their dims, never their values (and report an error, having nothing to pack from, when the
  // engine's packed tensor is not the one they need and the values are absent). An engine file
  // stores only the dims of a constant whose every reader packed it. Default: none.
  virtual std::span<const size_t> packed_inputs() const { return {}; }
};

// What the builder found out about one candidate tactic for a layer: its median time when it was
// timed (or taken from the timing cache), else why it was not considered or timed.
struct TacticTiming {
  std::string tactic;
  double ms = -1;    // < 0: not timed
  std::string note;  // "rejected: ...", "cached", "failed: ...", "only candidate"; empty if timed
};

// Every tactic kiln has, in preference order per op.
std::span<const Tactic* const> all_tactics();
// Tactics for one op in preference order, the fallback "ref.generic" last.
std::vector<const Tactic*> tactics_for(std::string_view domain, std::string_view op_type);
// nullptr when no tactic has the name.
const Tactic* find_tactic(std::string_view name);

}  // namespace kiln::tactics

namespace kiln::tactics {

// The spec of graph node `node` as the engine sees it (descs from the graph, constants' values).
LayerSpec make_layer_spec(const ir::Graph& graph, const ir::Node& node);

}  // namespace kiln::tactics
