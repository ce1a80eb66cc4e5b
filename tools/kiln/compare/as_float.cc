#include "compare/as_float.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "kernels/ref/layout.h"
#include "kernels/ref/movement.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"

namespace kiln::cli::compare {
namespace {

const ir::Node* producer(const runtime::Engine& e, ir::ValueId v) {
  for (const ir::Node& n : e.graph().nodes) {
    if (std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end()) return &n;
  }
  return nullptr;
}

// The channels a blocked tensor holds (the kiln layer that wrote it: ConvNchw16c's output
// channels, ToNchw16c's input's, the others' `channels`; a layout-neutral ONNX op the layout pass
// left on blocked tensors, known by its blocked input, holds whole blocks: its dim 1), or none
// for a tensor in NCHW.
std::optional<int64_t> nchw16c_channels(const runtime::Engine& e, ir::ValueId v) {
  const ir::Node* n = producer(e, v);
  if (n == nullptr || n->inputs.empty()) return std::nullopt;
  const ir::Graph& g = e.graph();
  if (n->domain != ops::kKilnDomain) {
    // Only a layout-neutral op reads a blocked input (nchw16c_layout reorders it for any other),
    // and it writes blocked tensors of whole blocks.
    const ir::TensorDesc& d = g.value(v).desc;
    const bool whole =
        d.rank() == 4 && d.dim(1).is_known() && d.dim(1).value % kernels::ref::kChannelBlock == 0;
    return whole && nchw16c_channels(e, n->inputs[0]) ? std::optional<int64_t>(d.dim(1).value)
                                                      : std::nullopt;
  }
  const ir::TensorDesc* plain = nullptr;
  if (n->op_type == ops::kConvNchw16c && n->inputs.size() > 1) plain = &g.value(n->inputs[1]).desc;
  if (n->op_type == ops::kToNchw16c) plain = &g.value(n->inputs[0]).desc;
  if (n->op_type != ops::kFromNchw16c && n->attrs.has("channels")) {
    const int64_t c = n->attrs.get_int("channels", 0);
    return c > 0 ? std::optional<int64_t>(c) : std::nullopt;
  }
  const int axis = n->op_type == ops::kToNchw16c ? 1 : 0;
  if (plain == nullptr || plain->rank() != 4 || !plain->dim(axis).is_known()) return std::nullopt;
  return plain->dim(axis).value;
}

// True for a channels-last twin qconv_nhwc made (its value name ends in ".nhwc"): the output of a
// kiln.QConvNhwc or of a Transpose into NHWC.
bool is_nhwc(const runtime::Engine& e, ir::ValueId v) {
  const ir::Node* n = producer(e, v);
  if (n == nullptr || !e.graph().value(v).name.ends_with(".nhwc")) return false;
  return (n->domain == ops::kKilnDomain && n->op_type == "QConvNhwc") ||
         (n->domain.empty() && n->op_type == "Transpose" &&
          n->attrs.get_ints("perm") == std::vector<int64_t>{0, 2, 3, 1});
}

}  // namespace

std::string reference_tensor_name(const runtime::Engine& e, ir::ValueId v,
                                  const std::function<bool(const std::string&)>& has) {
  const ir::Value& value = e.graph().value(v);
  if (has(value.name)) return value.name;
  const std::string& n = value.name;
  if (is_nhwc(e, v)) {
    const std::string base = n.substr(0, n.size() - 5);
    if (has(base)) return base;
    if (base.ends_with("_u8") && has(base.substr(0, base.size() - 3))) {
      return base.substr(0, base.size() - 3);
    }
    return "";
  }
  const std::string_view suffix = value.desc.dtype == DType::kU8 ? "_u8"
                                  : nchw16c_channels(e, v)       ? ".nchw16c"
                                                                 : "";
  if (!suffix.empty() && n.size() > suffix.size() && n.ends_with(suffix)) {
    std::string base = n.substr(0, n.size() - suffix.size());
    if (has(base)) return base;
  }
  return "";
}

namespace {

// The (scale, zero point) of a uint8 tensor an INT8 engine writes: an INT8 layer's requantized
// output (y_scale, y_zero_point) or a QuantizeLinear's (constant scale and zero point inputs).
std::optional<std::pair<float, int32_t>> uint8_encoding(const runtime::Engine& e, ir::ValueId v) {
  const ir::Graph& g = e.graph();
  for (const ir::Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0] != v) continue;
    if (n.domain == "kiln" &&
        (n.op_type == "QConv" || n.op_type == "QConvNhwc" || n.op_type == "QGemm")) {
      return std::pair{n.attrs.get_float("y_scale", 1.0f),
                       static_cast<int32_t>(n.attrs.get_int("y_zero_point", 0))};
    }
    // A transpose keeps its input's encoding (qconv_nhwc's, into and out of NHWC).
    if (n.domain.empty() && n.op_type == "Transpose") return uint8_encoding(e, n.inputs[0]);
    if (n.domain.empty() && n.op_type == "QuantizeLinear" && n.inputs.size() == 3) {
      const Tensor* scale = g.value(n.inputs[1]).constant();
      const Tensor* zero = g.value(n.inputs[2]).constant();
      if (scale && zero && scale->numel() == 1 && zero->numel() == 1 &&
          scale->dtype() == DType::kF32) {
        return std::pair{scale->data<float>()[0], static_cast<int32_t>(zero->value_as_int(0))};
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::variant<FloatTensor, NotComparable> engine_tensor_as_float(const runtime::Engine& e,
                                                                ir::ValueId v,
                                                                const TensorView& view) {
  const auto n = static_cast<size_t>(dims_numel(view.dims));
  FloatTensor out{std::vector<float>(n), Dims(view.dims.begin(), view.dims.end())};
  if (view.dtype == DType::kU8) {
    const std::optional<std::pair<float, int32_t>> enc = uint8_encoding(e, v);
    if (!enc) return NotComparable{"not comparable (uint8 without a known scale)"};
    const auto* q = static_cast<const uint8_t*>(view.data);
    for (size_t i = 0; i < n; ++i) {
      out.values[i] = static_cast<float>(q[i] - enc->second) * enc->first;
    }
    if (is_nhwc(e, v) && view.dims.size() == 4) {  // compared as the reference's NCHW
      static constexpr int64_t kToNchw[] = {0, 3, 1, 2};
      FloatTensor nchw{std::vector<float>(n), {out.dims[0], out.dims[3], out.dims[1], out.dims[2]}};
      kernels::ref::transpose(out.values.data(), sizeof(float), out.dims, kToNchw,
                              nchw.values.data());
      return nchw;
    }
    return out;
  }
  if (view.dtype != DType::kF32) {
    return NotComparable{fmt::format("not comparable ({})", dtype_name(view.dtype))};
  }
  const auto* x = static_cast<const float*>(view.data);
  if (const std::optional<int64_t> c = nchw16c_channels(e, v); c && view.dims.size() == 4) {
    out.dims[1] = *c;
    out.values.resize(static_cast<size_t>(dims_numel(out.dims)));
    kernels::ref::from_nchw16c(x, out.dims[0], *c, out.dims[2] * out.dims[3], out.values.data());
    return out;
  }
  if (n) std::memcpy(out.values.data(), x, n * sizeof(float));
  return out;
}

}  // namespace kiln::cli::compare
