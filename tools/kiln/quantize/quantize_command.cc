#include "quantize/quantize_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <ostream>

#include "engine/builder.h"
#include "frontend/onnx/exporter.h"
#include "frontend/onnx/importer.h"
#include "io/file_util.h"
#include "kiln/version.h"
#include "options.h"
#include "passes/pipeline.h"
#include "precision_flags.h"
#include "quant/qdq_export.h"
#include "quant/qdq_extract.h"
#include "quant/quantize_layers.h"

namespace kiln::cli::quantize {
namespace {

namespace fs = std::filesystem;

// The precision flags as `kiln build --int8` takes them (same checks, same warnings).
Result<engine::BuildOptions> quantize_precision_options(const QuantizeOptions& o,
                                                        std::vector<std::string>& warnings) {
  PrecisionFlags f;
  f.int8 = true;
  f.calib = o.calib;
  f.constraints = o.constraints;
  if (!o.layer_precisions.empty()) {
    KILN_ASSIGN_OR_RETURN(f.layer_precisions,
                          parse_named_values("--layerPrecisions", o.layer_precisions, "precision"));
  }
  engine::BuildOptions b;
  KILN_RETURN_IF_ERROR(apply_precision_flags(f, o.onnx, b, warnings));
  return b;
}

Result<ir::Graph> quantize_run_passes(const std::string& bytes, const std::string& path,
                                      const std::vector<std::string>& disabled) {
  KILN_ASSIGN_OR_RETURN(ir::Graph g,
                        frontend::import_onnx_bytes(bytes, fs::path(path).parent_path(), path));
  passes::PassLog log;
  KILN_RETURN_IF_ERROR(passes::run_pipeline(g, {.disabled = disabled}, log, nullptr));
  return g;
}

// IR 8 holds opsets up to 17, IR 9 up to 20, IR 10 21.
int64_t quantize_ir_version(int64_t opset) { return opset <= 17 ? 8 : opset <= 20 ? 9 : 10; }

}  // namespace

Status check_quantize_options(const QuantizeOptions& o) {
  if (o.onnx.empty()) return invalid_argument("--onnx is required");
  if (o.calib.empty()) {
    return invalid_argument(
        "--calib is required: a calibration file from `kiln calibrate` (or a TensorRT cache)");
  }
  if (o.output.empty()) return invalid_argument("--output (-o) is required");
  std::error_code ec;  // the non-throwing forms: a path that cannot be examined is "not there"
  if (!fs::is_regular_file(o.onnx, ec)) return not_found("--onnx={}: no such file", o.onnx);
  if (!fs::is_regular_file(o.calib, ec)) return not_found("--calib={}: no such file", o.calib);
  const fs::path dir = fs::path(o.output).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) {
    return io_error("-o {}: '{}' is not an existing folder", o.output, dir.string());
  }
  if (fs::is_directory(o.output, ec)) return io_error("-o {}: is a folder", o.output);
  if (fs::exists(o.output, ec) && fs::equivalent(o.output, o.onnx, ec)) {
    return invalid_argument("-o {} would overwrite the input model", o.output);
  }
  return quant::parse_qdq_activation_type(o.activation_type).status();
}

Status quantize_command(const QuantizeOptions& o, std::ostream& out) {
  KILN_RETURN_IF_ERROR(check_quantize_options(o));
  KILN_ASSIGN_OR_RETURN(const quant::QdqActivationType type,
                        quant::parse_qdq_activation_type(o.activation_type));
  std::vector<std::string> warnings;
  KILN_ASSIGN_OR_RETURN(const engine::BuildOptions precision,
                        quantize_precision_options(o, warnings));
  for (const std::string& w : warnings) fmt::print(out, "[W] {}\n", w);
  KILN_ASSIGN_OR_RETURN(const std::string bytes, io::read_file(o.onnx));
  {
    KILN_ASSIGN_OR_RETURN(
        const ir::Graph imported,
        frontend::import_onnx_bytes(bytes, fs::path(o.onnx).parent_path(), o.onnx));
    if (quant::has_qdq(imported)) {
      return invalid_argument(
          "{} already holds QuantizeLinear/DequantizeLinear nodes: it is quantized (build it with "
          "`kiln build`, which takes its own scales)",
          o.onnx);
    }
  }
  // Which layers kiln runs in INT8, decided as `kiln build --int8 --calib` decides it.
  KILN_ASSIGN_OR_RETURN(ir::Graph fused, quantize_run_passes(bytes, o.onnx, {}));
  const quant::RangeTable ranges = quant::RangeTable::from_calibration(*precision.calibration);
  quant::QuantizeOptions q{&ranges, precision.layer_precisions, precision.precision_constraints};
  KILN_ASSIGN_OR_RETURN(const quant::QuantizeReport decided, quant::quantize_layers(fused, q));
  for (const std::string& line : decided.log) {
    if (line.starts_with("warning: ")) fmt::print(out, "[W] {}\n", line.substr(9));
  }
  // The Q/DQ nodes go into the unfused graph (BN folded, standard ONNX ops).
  KILN_ASSIGN_OR_RETURN(ir::Graph g,
                        quantize_run_passes(bytes, o.onnx, passes::fusion_pass_names()));
  KILN_ASSIGN_OR_RETURN(quant::QdqReport report,
                        quant::insert_qdq(g, quant::qdq_placement(fused), ranges, type));
  for (const std::string& line : report.log) {
    fmt::print(out, "{} {}\n", line.starts_with("warning: ") ? "[W]" : "[I]",
               line.starts_with("warning: ") ? line.substr(9) : line);
  }
  g.opset_imports.erase("kiln");
  frontend::ExportOptions e;
  e.producer_version = std::string(kVersion);
  e.ir_version = quantize_ir_version(g.opset_imports[""]);
  e.doc_string =
      fmt::format("QDQ model written by kiln quantize from {} with {} ({} activations)",
                  fs::path(o.onnx).filename().string(), ranges.origin(), o.activation_type);
  KILN_ASSIGN_OR_RETURN(const std::string written, frontend::export_onnx_bytes(g, e));
  if (e.ir_version <= frontend::onnx_checker_ir_version()) {
    KILN_RETURN_IF_ERROR(frontend::check_onnx_bytes(written).with_context("the QDQ model"));
  } else {
    fmt::print(out,
               "[W] ONNX's checker here knows IR versions up to {}; this opset {} model (IR {}) "
               "is written unchecked\n",
               frontend::onnx_checker_ir_version(), g.opset_imports[""], e.ir_version);
  }
  Status st = io::write_file_atomic(o.output, written);
  if (!st.is_ok()) return st.with_context(fmt::format("writing -o {}", o.output));
  fmt::print(out, "[I] int8: {} layers in INT8, {} left in float; ranges from {}\n",
             decided.int8_layers, decided.float_layers, ranges.origin());
  fmt::print(out, "[I] QDQ model ({} activations, opset {}) written to {}\n", o.activation_type,
             g.opset_imports[""], o.output);
  return Status::ok();
}

}  // namespace kiln::cli::quantize
