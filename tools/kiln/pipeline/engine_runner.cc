#include "pipeline/engine_runner.h"

#include <fmt/format.h>

#include "engine/serialize.h"

namespace kiln::cli::pipeline {
namespace {

Result<Dims> batch_one_dims(const runtime::Engine& engine, const ir::Value& in,
                            const std::string& path) {
  if (in.desc.dtype != DType::kF32 || !in.desc.has_rank() || in.desc.rank() != 4) {
    return unsupported(
        "kiln pipeline feeds one float32 image input of rank 4 (NCHW or NHWC); engine '{}' input "
        "'{}' is {}",
        path, in.name, in.desc.to_string());
  }
  Dims dims;
  for (const ir::Dim& d : *in.desc.shape) dims.push_back(d.is_known() ? d.value : -1);
  const auto& profiles = engine.plan().profiles;
  for (const engine::InputRange& r :
       profiles.empty() ? std::vector<engine::InputRange>{} : profiles.front().inputs) {
    if (r.input != in.name) continue;
    for (size_t i = 1; i < dims.size(); ++i) {
      if (dims[i] < 0 && i < r.opt.size()) dims[i] = r.opt[i];
    }
  }
  dims[0] = 1;
  for (int64_t d : dims) {
    if (d < 1) {
      return unsupported("engine '{}' input '{}' is {}: its dims after the batch are not known",
                         path, in.name, in.desc.to_string());
    }
  }
  return dims;
}

}  // namespace

Result<EngineRunner> EngineRunner::open(const std::string& path, int threads) {
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(path));
  EngineRunner r;
  KILN_ASSIGN_OR_RETURN(r.engine_, runtime::Engine::create(std::move(plan)));
  const ir::Graph& g = r.engine_->graph();
  if (g.inputs.size() != 1 || g.outputs.empty()) {
    return unsupported(
        "kiln pipeline feeds engines with one image input and reads their first output; '{}' has "
        "{} inputs and {} outputs",
        path, g.inputs.size(), g.outputs.size());
  }
  const ir::Value& in = g.value(g.inputs[0]);
  const ir::Value& out = g.value(g.outputs[0]);
  if (out.desc.dtype != DType::kF32) {
    return unsupported("engine '{}' output '{}' is {}; kiln pipeline reads float32 outputs", path,
                       out.name, out.desc.to_string());
  }
  r.input_ = in.name;
  r.output_ = out.name;
  KILN_ASSIGN_OR_RETURN(r.input_dims_, batch_one_dims(*r.engine_, in, path));
  KILN_ASSIGN_OR_RETURN(r.ctx_, r.engine_->create_execution_context({.threads = threads}));
  Status shaped = r.ctx_->set_input_shape(r.input_, r.input_dims_);
  if (!shaped.is_ok()) {
    return shaped.with_context(fmt::format("engine '{}' at batch 1", path));
  }
  KILN_ASSIGN_OR_RETURN(r.output_dims_, r.ctx_->tensor_shape(r.output_));
  return r;
}

Status EngineRunner::run(const Tensor& sample) {
  if (sample.dims() != sample_dims() || sample.dtype() != DType::kF32) {
    return invalid_argument("the preprocessed image is {} [{}]; input '{}' needs float32 [{}]",
                            dtype_name(sample.dtype()), dims_to_string(sample.dims()), input_,
                            dims_to_string(sample_dims()));
  }
  KILN_RETURN_IF_ERROR(ctx_->set_tensor_address(input_, sample.raw_data()));
  KILN_RETURN_IF_ERROR(ctx_->execute());
  KILN_ASSIGN_OR_RETURN(const void* out, ctx_->tensor_address(output_));
  int64_t n = 1;
  for (int64_t d : output_dims_) n *= d;
  output_data_ = {static_cast<const float*>(out), static_cast<size_t>(n)};
  return Status::ok();
}

}  // namespace kiln::cli::pipeline
