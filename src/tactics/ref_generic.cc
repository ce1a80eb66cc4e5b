#include "tactics/ref_generic.h"

#include <cstring>

#include "ops/infer_graph.h"

namespace kiln::tactics {
namespace {

class RefGenericKernel final : public LayerKernel {
 public:
  RefGenericKernel(const ir::Node& node, ops::ResolvedOp op) : node_(node), op_(op) {}

  Status run(std::span<const TensorView> inputs, std::span<const TensorView> outputs) override {
    std::vector<Tensor> in(inputs.size());
    std::vector<const Tensor*> in_ptrs(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].dtype == DType::kUndefined) continue;  // omitted optional input
      in[i] = borrow(inputs[i]);
      in_ptrs[i] = &in[i];
    }
    std::vector<ir::TensorDesc> descs;
    for (const TensorView& o : outputs) {
      descs.push_back(ir::TensorDesc::of_dims(o.dtype, Dims(o.dims.begin(), o.dims.end())));
    }
    ops::RunContext ctx(node_, op_.since_version, std::move(in_ptrs), std::move(descs));
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].data != nullptr) ctx.preset_output(i, borrow(outputs[i]));
    }
    KILN_RETURN_IF_ERROR(op_.def->run(ctx));
    for (size_t i = 0; i < outputs.size(); ++i) {
      KILN_RETURN_IF_ERROR(copy_out(i, ctx.outputs()[i], outputs[i]));
    }
    return Status::ok();
  }

 private:
  static Tensor borrow(const TensorView& v) {
    return Tensor::borrow(v.dtype, Dims(v.dims.begin(), v.dims.end()), v.data, nullptr);
  }

  // A kernel that returned a view of an input (Reshape, Identity) or allocated its own output
  // leaves the result elsewhere: copy it into the engine's buffer.
  Status copy_out(size_t i, const Tensor& result, const TensorView& out) const {
    if (out.data == nullptr) return Status::ok();  // output not bound: nobody reads it
    if (result.raw_data() == out.data) return Status::ok();
    if (!result.defined() || result.dtype() != out.dtype ||
        !std::equal(result.dims().begin(), result.dims().end(), out.dims.begin(), out.dims.end())) {
      return internal_error("node '{}' ({}): output {} is {} but the engine planned {}[{}]",
                            node_.name, node_.op_type, i, result.desc(), dtype_name(out.dtype),
                            dims_to_string(out.dims));
    }
    std::memcpy(out.data, result.raw_data(), result.nbytes());
    return Status::ok();
  }

  const ir::Node& node_;
  ops::ResolvedOp op_;
};

class RefGenericTactic final : public Tactic {
 public:
  std::string_view name() const override { return "ref.generic"; }
  std::string_view source() const override { return "ref"; }
  std::string_view op_type() const override { return "*"; }
  bool allocates() const override { return true; }
  std::string why_not(const LayerSpec& spec) const override {
    return ops::op_registry().find(spec.node->domain, spec.node->op_type) == nullptr
               ? "kiln has no reference kernel for this op"
               : "";
  }
  Result<std::unique_ptr<LayerKernel>> instantiate(const LayerSpec& spec) const override {
    return std::unique_ptr<LayerKernel>(
        new RefGenericKernel(*spec.node, ops::resolve_op(*spec.node)));
  }
};

}  // namespace

const Tactic& ref_generic_tactic() {
  static const RefGenericTactic tactic;
  return tactic;
}

}  // namespace kiln::tactics
