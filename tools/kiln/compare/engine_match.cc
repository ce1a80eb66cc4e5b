#include "compare/engine_match.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "engine/serialize.h"

namespace kiln::cli::compare {
namespace {

bool compatible(const ir::TensorDesc& a, const ir::TensorDesc& b) {
  if (a.dtype != b.dtype || a.rank() != b.rank()) return false;
  for (int d = 0; a.has_rank() && d < a.rank(); ++d) {
    if (a.dim(d).is_known() && b.dim(d).is_known() && a.dim(d).value != b.dim(d).value) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> names_of(const ir::Graph& g, const std::vector<ir::ValueId>& ids,
                                  bool skip_initializers) {
  std::vector<std::string> names;
  for (ir::ValueId v : ids) {
    if (!(skip_initializers && g.value(v).initializer)) names.push_back(g.value(v).name);
  }
  return names;
}

Status check_side(bool inputs, const ir::Graph& model, const ir::Graph& eg,
                  const std::string& model_path, const std::string& engine_path) {
  const char* side = inputs ? "input" : "output";
  const std::vector<ir::ValueId>& ids = inputs ? model.inputs : model.outputs;
  for (ir::ValueId v : ids) {
    const ir::Value& m = model.value(v);
    if (m.initializer) continue;  // an input with a default: engines may have folded it
    const ir::ValueId ev = eg.find_value(m.name);
    const bool is_io =
        ev != ir::kNoValue && (inputs ? eg.value(ev).is_graph_input : eg.value(ev).is_graph_output);
    if (!is_io) {
      return invalid_argument(
          "engine '{}' was not built from '{}': it has no {} '{}' (its {}s: {})", engine_path,
          model_path, side, m.name, side,
          fmt::join(names_of(eg, inputs ? eg.inputs : eg.outputs, false), ", "));
    }
    if (!compatible(m.desc, eg.value(ev).desc)) {
      return invalid_argument(
          "engine '{}' was not built from '{}': {} '{}' is {} there and {} in "
          "the model",
          engine_path, model_path, side, m.name, eg.value(ev).desc.to_string(), m.desc.to_string());
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::shared_ptr<const runtime::Engine>> load_compare_engine(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return not_found("engine file '{}' does not exist", path);
  }
  KILN_ASSIGN_OR_RETURN(engine::Plan plan, engine::load_plan(path));
  return runtime::Engine::create(std::move(plan));
}

Status check_engine_matches(const ir::Graph& model, const std::string& model_path,
                            const runtime::Engine& engine, const std::string& engine_path) {
  const ir::Graph& eg = engine.graph();
  KILN_RETURN_IF_ERROR(check_side(true, model, eg, model_path, engine_path));
  KILN_RETURN_IF_ERROR(check_side(false, model, eg, model_path, engine_path));
  if (eg.outputs.size() != model.outputs.size()) {
    return invalid_argument(
        "engine '{}' was not built from '{}': outputs {} there, {} in the model", engine_path,
        model_path, fmt::join(names_of(eg, eg.outputs, false), ", "),
        fmt::join(names_of(model, model.outputs, false), ", "));
  }
  return Status::ok();
}

}  // namespace kiln::cli::compare
