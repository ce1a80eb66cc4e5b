#pragma once
// onnx::TensorProto -> kiln Tensor, including external data with path confinement.

#include <filesystem>

#include "base/status.h"
#include "base/tensor.h"
#include "onnx/onnx_pb.h"

namespace kiln::frontend {

// ONNX TensorProto.DataType -> DType; kUndefined for values kiln has no name for (float8,
// complex...).
DType dtype_from_onnx(int32_t onnx_type);
// Names for every ONNX element type, for error messages ("complex64", "float8e4m3fn").
std::string onnx_type_name(int32_t onnx_type);

// Converts a tensor. `model_dir` resolves external data; empty means external data is refused.
// `what` names the tensor in errors ("initializer 'conv1.weight'").
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto,
                                 const std::filesystem::path& model_dir, std::string_view what);

// Resolves an external-data location against the model folder, refusing absolute paths and any path
// that leaves the folder (including through symlinks).
Result<std::filesystem::path> resolve_external_path(const std::filesystem::path& model_dir,
                                                    const std::string& location,
                                                    std::string_view what);

}  // namespace kiln::frontend
