#pragma once
// The range of every activation tensor an INT8 layer reads, by tensor name: from a calibration
// (kiln's file or an imported TensorRT cache) or, when the user gives none, trtexec's placeholders
// (good for measuring speed, not for accuracy). And the uint8 encoding kiln's INT8 layers use for a
// range.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/tensor.h"
#include "quant/calibration_file.h"

namespace kiln::quant {

// uint8 with a zero point, as kiln.QConv / kiln.QGemm read and write activations.
struct Uint8Encoding {
  float scale = 1;
  int32_t zero_point = 0;
};

struct TensorRange {
  double amax = 0;
  std::optional<double> min;  // the smallest value calibration saw (kiln's files only)
  // A QDQ model's own scale and zero point for the tensor, used as they are.
  std::optional<Uint8Encoding> encoding;
};

// A QDQ model's scales for a constant weight: one per index of `axis`, or one for the tensor.
struct WeightScales {
  Tensor scales;  // float32
  int axis = 0;
};

class RangeTable {
 public:
  static RangeTable from_calibration(const Calibration& c);
  // What trtexec's --int8 without --calib uses (setTensorDynamicRange): graph inputs +-2, every
  // other tensor +-4.
  static RangeTable placeholders();
  // An empty table that explicit (QDQ) encodings and weight scales are added to.
  static RangeTable explicit_scales();
  // False when the tensor already has an encoding (the first one stays).
  bool add_encoding(const std::string& tensor, Uint8Encoding e);
  void add_weight_scales(const std::string& weight, WeightScales s);
  const WeightScales* weight_scales(std::string_view weight) const;

  // nullptr when the table has no range for the tensor.
  const TensorRange* find(std::string_view tensor, bool is_graph_input) const;
  bool is_placeholder() const { return placeholder_; }
  size_t size() const { return ranges_.size(); }
  bool empty() const { return ranges_.empty() && weight_scales_.empty(); }
  const std::string& origin() const { return origin_; }

 private:
  std::map<std::string, TensorRange, std::less<>> ranges_;
  std::map<std::string, WeightScales, std::less<>> weight_scales_;
  bool placeholder_ = false;
  std::string origin_;
  TensorRange input_placeholder_{2.0, {}}, other_placeholder_{4.0, {}};
};

// A tensor known to be >= 0 uses all 256 levels from 0 (scale amax / 255, zero point 0); any other
// is TensorRT's symmetric int8 (scale amax / 127) shifted into uint8 by a zero point of 128. A zero
// or invalid amax (a tensor that was always 0) gets scale 1: every value then encodes exactly.
Uint8Encoding uint8_encoding(double amax, bool nonnegative);

}  // namespace kiln::quant
