#pragma once
// ONNX (protobuf, via Debian's libonnx-dev classes) -> kiln IR.
//
// The importer checks structure (names, topological order, opsets, op support, attribute types) and
// runs kiln's shape inference, so a Graph it returns is ready to execute. Every error names the
// node, tensor or file it is about.

#include <filesystem>
#include <string_view>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/graph.h"

namespace kiln::frontend {

// Highest ai.onnx opset kiln accepts, and the lowest.
inline constexpr int kMaxOnnxOpset = 21;
inline constexpr int kMinOnnxOpset = 1;

// Reads and imports a model file. External-data files are resolved relative to the model's folder;
// a location that leaves that folder is refused.
Result<ir::Graph> import_onnx_file(const std::filesystem::path& path);

// Imports a serialized ModelProto. `model_dir` resolves external data.
Result<ir::Graph> import_onnx_bytes(std::string_view bytes, const std::filesystem::path& model_dir,
                                    std::string_view source_name = "<memory>");

// Reads a serialized TensorProto (ONNX test data's input_0.pb / output_0.pb).
Result<Tensor> load_tensor_proto_file(const std::filesystem::path& path);

}  // namespace kiln::frontend
