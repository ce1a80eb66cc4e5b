#include "precision_flags.h"

#include <fmt/format.h>

#include <algorithm>

#include "io/file_util.h"
#include "quant/calibration_file.h"

namespace kiln::cli {
namespace {

Status check_calibration_model(const quant::Calibration& c, const PrecisionFlags& f,
                               const std::string& onnx_path, std::vector<std::string>& warnings) {
  if (c.model_hash.empty() || onnx_path.empty()) return Status::ok();
  KILN_ASSIGN_OR_RETURN(const std::string bytes, io::read_file(onnx_path));
  if (quant::content_hash(bytes) != c.model_hash) {
    warnings.push_back(fmt::format(
        "--calib={} was made from another model than {} (hash {} vs {}): tensors it has no "
        "range for stay fp32, and the ranges it has may not fit",
        f.calib, onnx_path, c.model_hash, quant::content_hash(bytes)));
  }
  return Status::ok();
}

}  // namespace

Status apply_precision_flags(const PrecisionFlags& f, const std::string& onnx_path,
                             engine::BuildOptions& o, std::vector<std::string>& warnings) {
  KILN_ASSIGN_OR_RETURN(o.precision_constraints, quant::parse_precision_constraints(f.constraints));
  o.layer_precisions.clear();
  for (const auto& [layer, precision] : f.layer_precisions) {
    o.layer_precisions.push_back({layer, precision});
  }
  KILN_RETURN_IF_ERROR(quant::check_layer_precision_rules(o.layer_precisions));
  o.int8 = f.int8 || f.best;
  o.fp16 = f.fp16 || f.best;  // --best: INT8 where it can, FP16 weights for the rest (trtexec's)
  if (f.int8_weight_bits != 7 && f.int8_weight_bits != 8) {
    return invalid_argument("--int8WeightBits={}: 8 or 7 expected", f.int8_weight_bits);
  }
  o.int8_weight_bits = f.int8_weight_bits;
  if (f.int8_weight_bits != 8 && !o.int8) {
    warnings.push_back("--int8WeightBits is unused without --int8 or --best");
  }
  if (f.calib.empty()) return Status::ok();
  if (!o.int8) {
    warnings.push_back(fmt::format("--calib={} is unused without --int8 or --best", f.calib));
    return Status::ok();
  }
  Result<quant::Calibration> c = quant::read_calibration(f.calib);
  if (!c.is_ok()) return c.status().with_context(fmt::format("--calib={}", f.calib));
  KILN_RETURN_IF_ERROR(check_calibration_model(*c, f, onnx_path, warnings));
  o.calibration = std::move(c).value();
  return Status::ok();
}

std::string engine_precision(const engine::Plan& plan) {
  const bool int8 = std::any_of(plan.layers.begin(), plan.layers.end(),
                                [](const engine::Layer& l) { return l.precision == "int8"; });
  const bool fp16 = std::any_of(plan.layers.begin(), plan.layers.end(), [](const engine::Layer& l) {
    return l.precision == engine::kFp16Precision;
  });
  if (int8 && fp16) return "int8+fp16";
  return int8 ? "int8" : fp16 ? "fp16" : "fp32";
}

}  // namespace kiln::cli
