#include "compare/layer_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "compare/as_float.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"

namespace kiln::cli::compare {

void capture_reference(runtime::ReferenceExecutor& ref, const ir::Graph& model,
                       std::vector<std::string> wanted, ReferenceValues& out) {
  std::set<std::string, std::less<>> names(wanted.begin(), wanted.end());
  ref.set_observer([&model, names = std::move(names), &out](const ir::Node& node,
                                                            const std::vector<Tensor>& outputs) {
    for (size_t i = 0; i < node.outputs.size() && i < outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      const std::string& name = model.value(node.outputs[i]).name;
      if (!names.count(name)) continue;
      // A deep copy: the executor frees or reuses a value's storage after its last reader.
      Tensor copy(outputs[i].dtype(), outputs[i].dims());
      if (copy.nbytes()) std::memcpy(copy.raw_data(), outputs[i].raw_data(), copy.nbytes());
      out[name] = std::move(copy);
    }
  });
}

LayerComparer::LayerComparer(const runtime::Engine& engine, const ir::Graph& model)
    : engine_(engine) {
  const ir::Graph& g = engine.graph();
  const auto in_model = [&model](const std::string& n) {
    const ir::ValueId mv = model.find_value(n);
    return mv != ir::kNoValue && !model.value(mv).initializer;
  };
  for (const ir::Node& node : g.nodes) {
    // A layout reorder's output holds the values its input does, compared where they were made.
    const bool reorder = node.domain == ops::kKilnDomain &&
                         (node.op_type == ops::kToNchw16c || node.op_type == ops::kFromNchw16c);
    if (reorder) continue;
    for (ir::ValueId v : node.outputs) {
      if (v == ir::kNoValue) continue;
      const std::string name = reference_tensor_name(engine, v, in_model);
      if (name.empty()) continue;
      LayerRecord r;
      r.tensor = name;
      r.engine_tensor = g.value(v).name;
      r.layer = node.name;
      r.op_type = node.op_type;
      r.fused_from = node.fused_from;
      for (ir::ValueId in : node.inputs) {
        if (in == ir::kNoValue || g.value(in).initializer) continue;
        // A uint8 input is ranked by the float tensor it stands for.
        const std::string ref_name = reference_tensor_name(engine, in, in_model);
        r.inputs.push_back(ref_name.empty() ? g.value(in).name : ref_name);
      }
      slot_[v] = records_.size();
      records_.push_back(std::move(r));
      values_.push_back(v);
    }
  }
}

std::vector<LayerRecord> LayerComparer::finished_records() const {
  std::vector<LayerRecord> out = records_;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!out[i].not_comparable.empty() || out[i].err.elements()) continue;
    const DType dtype = engine_.graph().value(values_[i]).desc.dtype;
    out[i].not_comparable = dtype != DType::kF32
                                ? fmt::format("not comparable ({})", dtype_name(dtype))
                                : "not compared (computed by no kernel, or empty)";
  }
  return out;
}

std::vector<std::string> LayerComparer::tensors() const {
  std::vector<std::string> names;
  for (const LayerRecord& r : records_) names.push_back(r.tensor);
  return names;
}

void LayerComparer::attach(runtime::ExecutionContext& ctx, const ReferenceValues& refs,
                           const Tolerance& tol) {
  ctx.set_layer_callback(
      [this, &ctx, &refs, tol](size_t node) { compare_layer(ctx, node, refs, tol); });
}

void LayerComparer::compare_layer(runtime::ExecutionContext& ctx, size_t node,
                                  const ReferenceValues& refs, const Tolerance& tol) {
  for (ir::ValueId v : engine_.graph().nodes[node].outputs) {
    const auto slot = slot_.find(v);
    if (slot == slot_.end()) continue;
    LayerRecord& r = records_[slot->second];
    const auto ref = refs.find(r.tensor);
    Result<TensorView> view = ctx.value_view(v);
    if (ref == refs.end() || !view.is_ok()) {
      r.not_comparable = view.is_ok() ? "no reference value" : view.status().message();
      continue;
    }
    auto values = engine_tensor_as_float(engine_, v, *view);
    if (auto* nc = std::get_if<NotComparable>(&values)) {
      r.not_comparable = nc->reason;
      continue;
    }
    const FloatTensor& got = std::get<FloatTensor>(values);
    // Equal dims, not only equal sizes: a pass that kept a name on a relaid-out tensor must not be
    // compared element by element.
    if (ref->second.dtype() != DType::kF32 || ref->second.dims() != got.dims) {
      r.not_comparable = fmt::format("not comparable (engine {}, reference {})",
                                     dims_to_string(got.dims), ref->second.desc());
      continue;
    }
    r.err.add(got.values, ref->second.span<float>(), tol);
  }
}

std::vector<RankedLayer> rank_layers(const std::vector<LayerRecord>& records,
                                     const std::vector<std::string>& graph_inputs) {
  std::map<std::string, double, std::less<>> rel;  // compared tensors' relative L2 errors
  for (const std::string& in : graph_inputs) rel[in] = 0;
  for (const LayerRecord& r : records) {
    if (r.not_comparable.empty() && r.err.elements()) rel[r.tensor] = r.err.rel_l2_err();
  }
  std::vector<RankedLayer> ranked;
  for (const LayerRecord& r : records) {
    if (!r.not_comparable.empty() || !r.err.elements()) continue;
    double worst_in = 0;
    for (const std::string& in : r.inputs) {
      if (auto it = rel.find(in); it != rel.end()) worst_in = std::max(worst_in, it->second);
    }
    const double out = r.err.rel_l2_err();
    ranked.push_back({&r, out, worst_in, out - worst_in});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedLayer& a, const RankedLayer& b) { return a.added > b.added; });
  return ranked;
}

}  // namespace kiln::cli::compare
