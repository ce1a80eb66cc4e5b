#pragma once
// kiln IR -> ONNX (protobuf): the inverse of the importer for graphs made of standard ONNX ops
// (and the kiln domain, which only kiln reads). `kiln quantize` writes its QDQ models with it.
//
// Every constant a node reads becomes an initializer (raw_data, little-endian as ONNX requires); a
// graph input with a default stays an input and an initializer. Graph inputs and outputs carry
// their dtype and shape (symbols kept); intermediate tensors carry none (ONNX shape inference
// recomputes them).

#include <string>

#include "base/status.h"
#include "ir/graph.h"

namespace kiln::frontend {

struct ExportOptions {
  std::string producer_name = "kiln";
  std::string producer_version;
  std::string doc_string;
  int64_t ir_version = 8;  // ONNX 1.10+: opsets up to 17 (IR 9 from opset 19, 10 from 21)
};

// The serialized ModelProto. Fails, naming the tensor, for dtypes ONNX files cannot hold as kiln
// stores them (strings) and for graphs that do not verify.
Result<std::string> export_onnx_bytes(const ir::Graph& graph, const ExportOptions& options = {});

// ONNX's own checks on a serialized model (onnx::checker::check_model, full shape inference with
// errors on): the error quotes the checker.
Status check_onnx_bytes(const std::string& bytes);

// The newest IR version the linked ONNX library checks (Debian 12's libonnx 1.12: IR 8, opsets up
// to 17); a newer model cannot be checked by it.
int64_t onnx_checker_ir_version();

}  // namespace kiln::frontend
