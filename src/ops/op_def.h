#pragma once
// An operator as kiln knows it: its declared attributes, its shape function and its reference
// kernel.
//
// Each op family lives in one file (ops/elementwise.cc, ops/conv.cc, ...) that defines a
// register_<family>_ops(OpRegistry&) function; ops/registry.cc calls them all. Adding an op is one
// entry in its family file.
//
// Versions: `since_versions` lists the ONNX opset versions at which the op's definition changed and
// that kiln implements (e.g. Softmax {1, 11, 13}). A node whose model imports opset N uses the
// largest entry <= N; `since_version()` in the contexts below returns it, so the code can switch on
// semantics
// ("axes became an input at 13"). tests/unit/op_versions_test.cc checks the list against ONNX's own
// schemas.

#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/graph.h"

namespace kiln::ops {

struct AttrSpec {
  std::string_view name;
  ir::AttrType type;
};

class InferContext;
class RunContext;

// Derives output dtypes and shapes from the inputs' descs (and their values when known). Runs both
// at import, with symbolic dims, and at run time, with concrete dims and every input value known.
using InferFn = Status (*)(InferContext&);
// The reference kernel: plain, obviously correct, the oracle for every optimized kernel.
using RunFn = Status (*)(RunContext&);

struct OpDef {
  std::string_view op_type;
  std::vector<int> since_versions;  // ascending
  int min_inputs = 0;
  int max_inputs = 0;  // kVariadic for no limit
  int min_outputs = 1;
  int max_outputs = 1;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  RunFn run = nullptr;
  std::string_view domain = "";  // "" is ai.onnx
};
inline constexpr int kVariadic = 1 << 20;

class OpRegistry {
 public:
  void add(OpDef def);
  // nullptr when kiln does not know the op.
  const OpDef* find(std::string_view domain, std::string_view op_type) const;
  std::span<const OpDef> all() const { return defs_; }

 private:
  std::vector<OpDef> defs_;
};

// The registry with every op kiln supports.
const OpRegistry& op_registry();

// The effective since_version for a model opset, or 0 when the op did not exist yet at that opset.
int resolve_since_version(const OpDef& def, int model_opset);

// --- contexts
// -------------------------------------------------------------------------------------

// Base for both contexts: the node, its version, and errors that name the node.
class NodeContext {
 public:
  NodeContext(const ir::Node& node, int since_version)
      : node_(node), since_version_(since_version) {}
  const ir::Node& node() const { return node_; }
  const ir::Attributes& attrs() const { return node_.attrs; }
  int since_version() const { return since_version_; }
  size_t num_inputs() const { return node_.inputs.size(); }
  size_t num_outputs() const { return node_.outputs.size(); }
  // False for an optional input/output the model leaves out (or beyond the end).
  bool has_input(size_t i) const {
    return i < node_.inputs.size() && node_.inputs[i] != ir::kNoValue;
  }
  bool has_output(size_t i) const {
    return i < node_.outputs.size() && node_.outputs[i] != ir::kNoValue;
  }

  // invalid_model("node 'conv1' (Conv): <message>")
  template <typename... Args>
  Status error(fmt::format_string<Args...> f, Args&&... args) const {
    return Status(StatusCode::kInvalidModel,
                  prefix() + fmt::format(f, std::forward<Args>(args)...));
  }
  template <typename... Args>
  Status unsupported(fmt::format_string<Args...> f, Args&&... args) const {
    return Status(StatusCode::kUnsupported, prefix() + fmt::format(f, std::forward<Args>(args)...));
  }
  std::string prefix() const;

 private:
  const ir::Node& node_;
  int since_version_;
};

// The longest integer tensor whose elements shape inference traces (ops/dims_values.h), and the
// dtypes it traces.
inline constexpr int64_t kMaxTracedInts = 64;
inline bool is_traced_dtype(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kBool;
}

class InferContext : public NodeContext {
 public:
  // `input_dims_values` (optional, as `input_values`) holds what ops/dims_values.h traced of small
  // integer inputs whose values are not known.
  InferContext(const ir::Node& node, int since_version, std::vector<const ir::TensorDesc*> inputs,
               std::vector<const Tensor*> input_values,
               std::vector<const ir::SymInts*> input_dims_values = {})
      : NodeContext(node, since_version),
        inputs_(std::move(inputs)),
        values_(std::move(input_values)),
        dims_values_(std::move(input_dims_values)),
        outputs_(node.outputs.size()),
        output_values_(node.outputs.size()) {}

  // Desc of input i; must have has_input(i).
  const ir::TensorDesc& input(size_t i) const { return *inputs_[i]; }
  // The input's value when known (initializers, constants, and every input at run time); else
  // nullptr.
  const Tensor* input_value(size_t i) const { return i < values_.size() ? values_[i] : nullptr; }
  // The elements of an integer or bool input of rank <= 1 and at most kMaxTracedInts elements:
  // numbers from its value when known, else what shape inference traced (a Shape's symbols,
  // ops/dims_values.h), else unknown elements when its length is known; nullopt otherwise.
  std::optional<ir::SymInts> input_dims_value(size_t i) const;

  void set_output(size_t i, ir::TensorDesc desc) { outputs_[i] = std::move(desc); }
  // An op whose output value follows from descs alone (Shape, Size) may provide it here.
  void set_output_value(size_t i, Tensor t) { output_values_[i] = std::move(t); }

  std::vector<ir::TensorDesc>& outputs() { return outputs_; }
  const std::vector<ir::TensorDesc>& outputs() const { return outputs_; }
  std::vector<std::optional<Tensor>>& output_values() { return output_values_; }

 private:
  std::vector<const ir::TensorDesc*> inputs_;
  std::vector<const Tensor*> values_;
  std::vector<const ir::SymInts*> dims_values_;
  std::vector<ir::TensorDesc> outputs_;
  std::vector<std::optional<Tensor>> output_values_;
};

class RunContext : public NodeContext {
 public:
  RunContext(const ir::Node& node, int since_version, std::vector<const Tensor*> inputs,
             std::vector<ir::TensorDesc> output_descs)
      : NodeContext(node, since_version),
        inputs_(std::move(inputs)),
        output_descs_(std::move(output_descs)),
        outputs_(node.outputs.size()) {}

  // Input i; must have has_input(i).
  const Tensor& input(size_t i) const { return *inputs_[i]; }
  // What shape inference derived for output i (static unless the op is data-dependent).
  const ir::TensorDesc& output_desc(size_t i) const { return output_descs_[i]; }
  // Allocates output i with the inferred dtype and dims (which must be static) and returns it.
  Tensor& allocate_output(size_t i);
  // Allocates output i with explicit dims (data-dependent ops: NonMaxSuppression, TopK with k
  // input).
  Tensor& allocate_output(size_t i, DType dtype, Dims dims);
  // Sets output i to an existing tensor (e.g. a reshaped view of an input).
  void set_output(size_t i, Tensor t) { outputs_[i] = std::move(t); }
  // Makes allocate_output(i) hand out `t` (zero-filled) instead of new storage when dtype and dims
  // match: the engine runs reference kernels straight into its arena this way. A kernel that
  // set_output()s a view instead leaves the copy to the caller.
  void preset_output(size_t i, Tensor t);

  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<ir::TensorDesc> output_descs_;
  std::vector<Tensor> outputs_;
  std::vector<Tensor> preset_;
};

}  // namespace kiln::ops
