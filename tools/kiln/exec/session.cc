#include "exec/session.h"

namespace kiln::cli::exec {

Result<runtime::NamedTensors> make_feeds(const runtime::Engine& engine, const InputFlags& flags,
                                         ExecLog& log) {
  const engine::Plan& plan = engine.plan();
  auto opt_dims = [&](const ir::Value& in) {
    for (const engine::InputRange& r : plan.profiles[0].inputs) {
      if (r.input == in.name) return r.opt;
    }
    return declared_dims(in);
  };
  return make_inputs(plan.graph, flags, opt_dims,
                     [&log](char severity, const std::string& text) { log.line(severity, text); });
}

Result<std::vector<ContextPtr>> make_contexts(const runtime::Engine& engine,
                                              const runtime::NamedTensors& feeds, int n) {
  std::vector<ContextPtr> contexts;
  const ir::Graph& g = engine.graph();
  KILN_RETURN_IF_ERROR(runtime::check_inputs(g, feeds));
  for (int i = 0; i < n; ++i) {
    KILN_ASSIGN_OR_RETURN(ContextPtr ctx, engine.create_execution_context());
    for (const auto& [name, t] : feeds) {
      KILN_RETURN_IF_ERROR(ctx->set_input_shape(name, t.dims()));
      KILN_RETURN_IF_ERROR(ctx->set_tensor_address(name, t.raw_data()));
    }
    // Resolves shapes, picks the profile, allocates the arena and binds the outputs now.
    for (ir::ValueId v : g.outputs) {
      KILN_RETURN_IF_ERROR(ctx->tensor_address(g.value(v).name).status());
    }
    contexts.push_back(std::move(ctx));
  }
  return contexts;
}

}  // namespace kiln::cli::exec
