#pragma once
// The engine side of `kiln pipeline`: loads an engine, checks that it takes one float32 image
// input of rank 4, and runs batch-1 samples through one execution context created once.

#include <memory>
#include <span>
#include <string>

#include "base/status.h"
#include "base/tensor.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"

namespace kiln::cli::pipeline {

class EngineRunner {
 public:
  // The input's dims are its declared dims with batch 1 (dynamic dims other than the batch take
  // the first profile's opt dims). The error names the engine file and the input.
  static Result<EngineRunner> open(const std::string& path, int threads);

  const std::string& input_name() const { return input_; }
  const Dims& input_dims() const { return input_dims_; }
  // Without the batch axis: [3, H, W] or [H, W, 3].
  Dims sample_dims() const { return Dims(input_dims_.begin() + 1, input_dims_.end()); }
  const std::string& output_name() const { return output_; }
  const Dims& output_dims() const { return output_dims_; }
  int threads() const { return ctx_->threads(); }

  // Runs one sample (sample_dims()); the first output is then output().
  Status run(const Tensor& sample);
  std::span<const float> output() const { return output_data_; }

 private:
  std::shared_ptr<const runtime::Engine> engine_;
  std::unique_ptr<runtime::ExecutionContext> ctx_;
  std::string input_, output_;
  Dims input_dims_, output_dims_;
  std::span<const float> output_data_;
};

}  // namespace kiln::cli::pipeline
