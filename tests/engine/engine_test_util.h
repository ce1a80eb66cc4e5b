#pragma once
// Small models and helpers shared by the engine and runtime tests.

#include <memory>
#include <vector>

#include "engine/builder.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"
#include "testing/onnx_builder.h"
#include "tuner/tuner.h"

namespace kiln::testing {

// x[batch,3,8,8] -> Conv(3->4, 3x3, pad 1) -> Relu -> Add(residual conv) -> GlobalAveragePool ->
// Flatten -> Gemm(4->5) -> y[batch,5]. Weights are deterministic, not trivial.
OnnxBuilder small_cnn(bool dynamic_batch);

// small_cnn's classifier (the Gemm "fc" of a plan built from small_cnn(false)) as the builder
// times it: f [2, 4] x wg [5, 4]^T + bg, its constants' values given. Points into plan's graph.
Result<tuner::TuningLayer> small_cnn_classifier(const engine::Plan& plan);

// x[batch,6] -> Shape -> Gather(0) -> Unsqueeze -> Concat([b, 2, 3]) -> Reshape(x) -> Relu -> y:
// the shape chain an exporter writes for a dynamic batch.
OnnxBuilder shape_chain_model();

// Builds (checks success) and wraps the plan in a runtime engine.
std::shared_ptr<const runtime::Engine> build_engine(const OnnxBuilder& model,
                                                    const engine::BuildOptions& options = {});

// Runs the reference executor on the imported model.
std::vector<Tensor> reference_outputs(const OnnxBuilder& model, const runtime::NamedTensors& in);

// A deterministic random float32 tensor.
Tensor random_f32(Dims dims, uint64_t seed);

// Runs the engine once in a new execution context (checks success; empty on failure).
std::vector<Tensor> run_engine(const runtime::Engine& engine, const runtime::NamedTensors& in);

// Cosine similarity of two float32 tensors of the same size.
double cosine(const Tensor& a, const Tensor& b);

}  // namespace kiln::testing
