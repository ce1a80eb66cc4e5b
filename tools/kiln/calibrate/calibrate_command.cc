#include "calibrate/calibrate_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

#include "calibrate/calib_data.h"
#include "engine/builder.h"
#include "frontend/onnx/importer.h"
#include "image_flags.h"
#include "io/file_util.h"
#include "options.h"
#include "quant/calibration_file.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln::cli::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

struct ModelInput {
  std::string name;
  Dims sample_dims;  // without the batch axis
  std::optional<int64_t> static_batch;
};

Result<ModelInput> model_input(const ir::Graph& g, const std::string& path) {
  if (g.inputs.size() != 1) {
    std::vector<std::string> names;
    for (ir::ValueId v : g.inputs) names.push_back(g.value(v).name);
    return unsupported("kiln calibrate feeds models with one input; '{}' has {}: {}", path,
                       g.inputs.size(), fmt::join(names, ", "));
  }
  const ir::Value& in = g.value(g.inputs[0]);
  if (in.desc.dtype != DType::kF32 || !in.desc.has_rank() || in.desc.rank() < 1) {
    return unsupported("input '{}' is {}; calibration needs a float32 input with a batch axis",
                       in.name, in.desc.to_string());
  }
  ModelInput m{in.name, {}, std::nullopt};
  for (int d = 1; d < in.desc.rank(); ++d) {
    if (!in.desc.dim(d).is_known()) {
      return unsupported("input '{}' is {}: only the batch axis (the first) may be dynamic",
                         in.name, in.desc.to_string());
    }
    m.sample_dims.push_back(in.desc.dim(d).value);
  }
  if (in.desc.dim(0).is_known()) m.static_batch = in.desc.dim(0).value;
  return m;
}

Result<std::shared_ptr<const runtime::Engine>> fp32_engine(ir::Graph graph, const ModelInput& in,
                                                           int64_t batch) {
  engine::BuildOptions options;
  options.optimization_level = 0;  // statistics do not need the fastest tactics
  // Without the residual fusion the convolution's own output (before its Add) is a tensor too, so
  // `kiln quantize` can give it the range ONNX Runtime's QLinearConv needs; every tensor of the
  // fused graph keeps its name (a fused layer's output is its last ONNX node's). Without the
  // blocked layout, every tensor is recorded under that name and over its real channels only: a
  // blocked twin ("<tensor>.nchw16c") would leave its NCHW tensor without a range, and the INT8
  // build would keep that tensor's readers in float.
  options.passes.disabled = {"conv_residual_fusion", "nchw16c_layout", "nchw16c_scale_fusion"};
  Dims min{1}, max{batch};
  min.insert(min.end(), in.sample_dims.begin(), in.sample_dims.end());
  max.insert(max.end(), in.sample_dims.begin(), in.sample_dims.end());
  if (!in.static_batch) options.profiles.push_back({{in.name, ShapeRange{min, max, max}}});
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::build_plan(std::move(graph), options));
  return runtime::Engine::create(std::move(plan));
}

// Statistics of every float value the engine computes, plus its input, keyed by value id.
using StatsMap = std::map<ir::ValueId, quant::AbsHistogram>;

Status collect(runtime::ExecutionContext& ctx, const CalibrationData& data, int64_t batch,
               size_t batches, StatsMap& stats, ProgressTarget progress) {
  const ir::Graph& g = ctx.engine().graph();
  const ir::ValueId input = g.inputs[0];
  Status failed;
  ctx.set_layer_callback([&](size_t node) {
    for (ir::ValueId v : g.nodes[node].outputs) {
      if (v == ir::kNoValue || g.value(v).desc.dtype != DType::kF32) continue;
      Result<TensorView> view = ctx.value_view(v);
      if (!view.is_ok()) {
        failed = view.status();
        continue;
      }
      stats[v].add({static_cast<const float*>(view->data), static_cast<size_t>(view->numel())});
    }
  });
  size_t samples = 0;
  Progress bar(progress, "calibrate", batches);
  for (size_t b = 0; b < batches; ++b) {
    KILN_ASSIGN_OR_RETURN(const Tensor x, data.batch(b, batch));
    stats[input].add(x.span<float>());
    KILN_RETURN_IF_ERROR(ctx.set_input_shape(g.value(input).name, x.dims()));
    KILN_RETURN_IF_ERROR(ctx.set_tensor_address(g.value(input).name, x.raw_data()));
    KILN_RETURN_IF_ERROR(ctx.execute());
    KILN_RETURN_IF_ERROR(failed);
    samples += static_cast<size_t>(x.dim(0));
    bar.update(b + 1, fmt::format("{} samples", samples));
  }
  ctx.set_layer_callback(nullptr);
  return Status::ok();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

Status calibrate_command(const CalibrateOptions& o, std::ostream& out, ProgressTarget progress) {
  if (o.onnx.empty()) return invalid_argument("--onnx is required");
  if (o.data.empty())
    return invalid_argument("--data is required (a folder of images or .npy files)");
  if (o.output.empty()) return invalid_argument("--output (-o) is required");
  quant::CalibrationMethod method;
  KILN_ASSIGN_OR_RETURN(method.algo, quant::parse_calibration_algo(o.algo));
  if (!(o.percentile > 0 && o.percentile <= 100)) {
    return invalid_argument("--percentile must be in (0, 100], got {}", o.percentile);
  }
  method.percentile = o.percentile;
  if (o.batch < 1) return invalid_argument("--batch must be >= 1, got {}", o.batch);
  const auto t0 = Clock::now();
  KILN_ASSIGN_OR_RETURN(ir::Graph graph, frontend::import_onnx_file(o.onnx));
  KILN_ASSIGN_OR_RETURN(const ModelInput in, model_input(graph, o.onnx));
  const int64_t batch = in.static_batch.value_or(o.batch);
  KILN_ASSIGN_OR_RETURN(io::ImagePreprocess pre, image_spec(o.image, in.sample_dims));
  KILN_ASSIGN_OR_RETURN(CalibrationData data, CalibrationData::open({o.data, in.sample_dims, pre}));
  fmt::print(out, "[I] data: {}\n", data.describe());
  if (in.static_batch && data.samples() % static_cast<size_t>(batch) != 0) {
    fmt::print(out, "[W] the model's batch is fixed at {}: the last {} samples are left out\n",
               batch, data.samples() % static_cast<size_t>(batch));
  }
  const size_t batches =
      in.static_batch ? std::min(data.samples() / batch, o.max_batches ? o.max_batches : SIZE_MAX)
                      : data.batch_count(batch, o.max_batches);
  if (batches == 0) {
    return invalid_argument("{} samples do not fill one batch of {}", data.samples(), batch);
  }
  KILN_ASSIGN_OR_RETURN(auto engine, fp32_engine(std::move(graph), in, batch));
  KILN_ASSIGN_OR_RETURN(auto ctx, engine->create_execution_context({.threads = o.threads}));
  StatsMap stats;
  KILN_RETURN_IF_ERROR(collect(*ctx, data, batch, batches, stats, progress));

  quant::Calibration c;
  c.method = method;
  c.model_hash = quant::content_hash(file_text(o.onnx));
  c.data_hash = data.hash();
  for (const auto& [v, h] : stats) {
    c.samples = std::max<int64_t>(c.samples, 0);
    c.tensors[engine->graph().value(v).name] = {quant::choose_amax(h, method), h};
  }
  c.samples = static_cast<int64_t>(std::min(data.samples(), batches * static_cast<size_t>(batch)));
  KILN_RETURN_IF_ERROR(quant::write_calibration(c, o.output));
  fmt::print(out, "[I] {} calibration of {} tensors over {} samples written to {} in {:.1f} s\n",
             quant::calibration_algo_name(method.algo), c.tensors.size(), c.samples, o.output,
             std::chrono::duration<double>(Clock::now() - t0).count());
  if (!o.export_trt_cache.empty()) {
    KILN_RETURN_IF_ERROR(
        io::write_file_atomic(o.export_trt_cache, quant::trt_cache_text(c, o.trt_version)));
    fmt::print(out, "[I] TensorRT calibration cache written to {}\n", o.export_trt_cache);
  }
  return Status::ok();
}

}  // namespace kiln::cli::calibrate
