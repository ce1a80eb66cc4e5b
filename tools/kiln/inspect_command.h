#pragma once
// `kiln inspect m.plan`: what an engine contains — per layer the fused ONNX nodes, op, tactic,
// precision, shapes and weight bytes; the memory plan; the profiles; the CPU features needed — as
// text or JSON (TensorRT's engine inspector).

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"

namespace kiln::cli {

struct InspectOptions {
  std::string engine;           // positional
  std::string format = "text";  // --format=text|json
};

// The whole description as JSON; the text form is rendered from it.
Result<nlohmann::json> inspect_engine(const std::string& path);

Status inspect_command(const InspectOptions& opts, std::ostream& out);

}  // namespace kiln::cli
