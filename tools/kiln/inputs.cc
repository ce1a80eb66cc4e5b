#include "inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/npy.h"
#include "io/random_input.h"
#include "io/raw_tensor.h"

namespace kiln::cli {
namespace {

// The dims to use for a graph input: --shapes, else `fallback` (with a warning when the input has
// dynamic dims).
Dims input_dims(const ir::Value& in, const InputFlags& flags, const DefaultDims& fallback,
                const LogLine& log) {
  if (auto it = flags.shapes.find(in.name); it != flags.shapes.end()) return it->second;
  Dims dims = fallback(in);
  std::vector<std::string> dynamic;
  for (const ir::Dim& d : *in.desc.shape) {
    if (!d.is_known()) dynamic.push_back(d.to_string());
  }
  if (!dynamic.empty()) {
    log('W', fmt::format("input '{}' has dynamic dims ({}) and no --shapes: using {}", in.name,
                         fmt::join(dynamic, ", "), dims_to_string(dims)));
  }
  return dims;
}

Result<Tensor> load_input(const ir::Value& in, const std::string& path, const Dims& dims) {
  if (path.size() > 4 && path.substr(path.size() - 4) == ".npy") return io::read_npy(path);
  return io::read_raw(path, in.desc.dtype, dims);
}

}  // namespace

Dims declared_dims(const ir::Value& in) {
  Dims dims;
  for (const ir::Dim& d : *in.desc.shape) dims.push_back(d.is_known() ? d.value : 1);
  return dims;
}

Result<runtime::NamedTensors> make_inputs(const ir::Graph& g, const InputFlags& flags,
                                          const DefaultDims& fallback, const LogLine& log) {
  auto is_input = [&](const std::string& name) {
    const ir::ValueId v = g.find_value(name);
    return v != ir::kNoValue && g.value(v).is_graph_input;
  };
  for (const auto& [name, dims] : flags.shapes) {
    if (!is_input(name)) return invalid_argument("--shapes: the model has no input '{}'", name);
  }
  for (const auto& [name, path] : flags.files) {
    if (!is_input(name)) return invalid_argument("--loadInputs: the model has no input '{}'", name);
  }
  runtime::NamedTensors feeds;
  for (ir::ValueId v : g.inputs) {
    const ir::Value& in = g.value(v);
    const auto file = flags.files.find(in.name);
    if (file == flags.files.end() && in.initializer && !flags.shapes.count(in.name)) continue;
    const Dims dims = input_dims(in, flags, fallback, log);
    KILN_RETURN_IF_ERROR(check_dims(dims, in.desc.dtype, fmt::format("input '{}'", in.name)));
    if (file != flags.files.end()) {
      KILN_ASSIGN_OR_RETURN(feeds[in.name], load_input(in, file->second, dims));
      log('I', fmt::format("input '{}': {} from {}", in.name, feeds[in.name].desc(), file->second));
    } else {
      KILN_ASSIGN_OR_RETURN(feeds[in.name], io::random_tensor(in.desc.dtype, dims, flags.seed));
      log('I', fmt::format("input '{}': {} random (seed {})", in.name, feeds[in.name].desc(),
                           flags.seed));
    }
  }
  return feeds;
}

}  // namespace kiln::cli
