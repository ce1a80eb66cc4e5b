#pragma once
// onnx::AttributeProto -> ir::Attributes. Subgraphs (If/Loop/Scan bodies), sparse tensors and type
// protos are unsupported and named in the error.

#include <filesystem>

#include "base/status.h"
#include "ir/attribute.h"
#include "onnx/onnx_pb.h"

namespace kiln::frontend {

Result<ir::Attributes> convert_attributes(const onnx::NodeProto& node, std::string_view node_name,
                                          const std::filesystem::path& model_dir);

}  // namespace kiln::frontend
