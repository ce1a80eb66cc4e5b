#include "ops/op_def.h"

#include <algorithm>
#include <cstring>

namespace kiln::ops {

void OpRegistry::add(OpDef def) {
  assert(find(def.domain, def.op_type) == nullptr && "op registered twice");
  assert(std::is_sorted(def.since_versions.begin(), def.since_versions.end()));
  defs_.push_back(std::move(def));
}

const OpDef* OpRegistry::find(std::string_view domain, std::string_view op_type) const {
  if (domain == "ai.onnx") domain = "";
  for (const OpDef& d : defs_) {
    if (d.op_type == op_type && d.domain == domain) return &d;
  }
  return nullptr;
}

int resolve_since_version(const OpDef& def, int model_opset) {
  int best = 0;
  for (int v : def.since_versions) {
    if (v <= model_opset) best = v;
  }
  return best;
}

std::string NodeContext::prefix() const {
  return fmt::format("node '{}' ({}): ", node_.name, node_.op_type);
}

std::optional<ir::SymInts> InferContext::input_dims_value(size_t i) const {
  if (!has_input(i)) return std::nullopt;
  if (const Tensor* t = input_value(i)) {
    if (!is_traced_dtype(t->dtype()) || t->rank() > 1 || t->numel() > kMaxTracedInts) {
      return std::nullopt;
    }
    ir::SymInts elems;
    for (int64_t v : t->to_int64_vector()) elems.push_back(ir::SymInt::of(v));
    return elems;
  }
  if (i < dims_values_.size() && dims_values_[i] != nullptr) return *dims_values_[i];
  const ir::TensorDesc& d = input(i);  // a length-known vector of unknown elements
  if (!is_traced_dtype(d.dtype) || !d.is_static() || d.rank() > 1) return std::nullopt;
  const int64_t n = d.rank() == 0 ? 1 : d.dim(0).value;
  if (n > kMaxTracedInts) return std::nullopt;
  return ir::SymInts(static_cast<size_t>(n), ir::SymInt::unknown());
}

void RunContext::preset_output(size_t i, Tensor t) {
  if (preset_.size() < outputs_.size()) preset_.resize(outputs_.size());
  preset_[i] = std::move(t);
}

Tensor& RunContext::allocate_output(size_t i) {
  const ir::TensorDesc& d = output_descs_[i];
  assert(d.is_static() && "allocate_output(i) needs a static inferred shape");
  return allocate_output(i, d.dtype, d.static_dims());
}

Tensor& RunContext::allocate_output(size_t i, DType dtype, Dims dims) {
  if (i < preset_.size() && preset_[i].dtype() == dtype && preset_[i].dims() == dims) {
    std::memset(preset_[i].raw_data(), 0, preset_[i].nbytes());
    outputs_[i] = preset_[i];
  } else {
    outputs_[i] = Tensor(dtype, std::move(dims));
  }
  return outputs_[i];
}

}  // namespace kiln::ops
