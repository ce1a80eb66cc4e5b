#include "quant/tensor_ranges.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kiln::quant {

RangeTable RangeTable::from_calibration(const Calibration& c) {
  RangeTable t;
  t.origin_ = c.origin == "kiln" ? fmt::format("a kiln calibration ({}, {} samples)",
                                               calibration_algo_name(c.method.algo), c.samples)
                                 : c.origin;
  for (const auto& [name, tc] : c.tensors) {
    TensorRange r{tc.amax, {}};
    if (tc.stats && tc.stats->total() > 0) r.min = tc.stats->min();
    t.ranges_.emplace(name, r);
  }
  return t;
}

RangeTable RangeTable::placeholders() {
  RangeTable t;
  t.placeholder_ = true;
  t.origin_ = "placeholder ranges (no calibration)";
  return t;
}

RangeTable RangeTable::explicit_scales() {
  RangeTable t;
  t.origin_ = "the model's QuantizeLinear/DequantizeLinear scales";
  return t;
}

bool RangeTable::add_encoding(const std::string& tensor, Uint8Encoding e) {
  TensorRange r;
  r.encoding = e;
  // The range the encoding covers, for anything that reads amax.
  r.amax = e.scale * std::max(e.zero_point, 255 - e.zero_point);
  return ranges_.emplace(tensor, r).second;
}

void RangeTable::add_weight_scales(const std::string& weight, WeightScales s) {
  weight_scales_[weight] = std::move(s);
}

const WeightScales* RangeTable::weight_scales(std::string_view weight) const {
  auto it = weight_scales_.find(weight);
  return it == weight_scales_.end() ? nullptr : &it->second;
}

const TensorRange* RangeTable::find(std::string_view tensor, bool is_graph_input) const {
  if (placeholder_) return is_graph_input ? &input_placeholder_ : &other_placeholder_;
  auto it = ranges_.find(tensor);
  return it == ranges_.end() ? nullptr : &it->second;
}

Uint8Encoding uint8_encoding(double amax, bool nonnegative) {
  if (!(amax > 0) || !std::isfinite(amax)) return {1.0f, nonnegative ? 0 : 128};
  if (nonnegative) return {static_cast<float>(amax / 255.0), 0};
  return {static_cast<float>(amax / 127.0), 128};
}

}  // namespace kiln::quant
