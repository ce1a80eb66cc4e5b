// kiln's peer runner: builds an engine for one batch size with the default build options (the
// tuner times tactics with --threads threads), then times ExecutionContext::execute() on bound
// buffers, the hot path an application would use. Protocol and output: runner_common.h.

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/version.h"
#include "runner_common.h"

namespace {

template <typename T>
T check(kiln::Result<T> r, const char* what) {
  if (!r.is_ok()) peers::die(fmt::format("{}: {}", what, r.status().to_string()));
  return std::move(r).value();
}

void check(const kiln::Status& s, const char* what) {
  if (!s.is_ok()) peers::die(fmt::format("{}: {}", what, s.to_string()));
}

}  // namespace

int main(int argc, char** argv) {
  kiln::use_kiln_openmp_wait(argv);
  const peers::Args args = peers::parse_args(argc, argv);
  const peers::Npy input = peers::tile_batch(peers::read_npy(args.input), args.batch);

  kiln::Network network = check(kiln::Network::from_onnx_file(args.onnx), "import");
  std::string input_name;
  std::vector<std::string> outputs;
  {
    kiln::BuilderConfig config;
    config.threads = args.threads;
    config.int8 = !args.calib.empty();
    config.calibration_file = args.calib;
    config.int8_weight_bits = args.int8_weight_bits;
    // A one-profile build at exactly this batch, as `kiln build --shapes=input:BxCxHxW` does; the
    // model set names its one input "input" (models/export.py).
    const kiln::ShapeRange range{input.shape, input.shape, input.shape};
    config.profiles.push_back({{"input", range}});
    kiln::Engine engine = check(kiln::Builder::build(network, config), "build");
    for (const kiln::TensorInfo& t : engine.io_tensors()) {
      if (t.is_input)
        input_name = t.name;
      else
        outputs.push_back(t.name);
    }
    kiln::ExecutionContext ctx = check(engine.create_execution_context(args.threads), "context");
    check(ctx.set_input_shape(input_name, input.shape), "set_input_shape");
    check(ctx.set_tensor_address(input_name, input.bytes.data()), "bind input");
    std::vector<std::vector<char>> out_buffers;
    for (const std::string& name : outputs) {
      const kiln::Dims dims = check(ctx.tensor_shape(name), "output shape");
      // Every output of the model set is float32 or smaller: 8 bytes per element is a safe bound.
      out_buffers.emplace_back(static_cast<size_t>(kiln::dims_numel(dims)) * 8 + 64);
      check(ctx.set_tensor_address(name, out_buffers.back().data()), "bind output");
    }
    const peers::Timing t = peers::time_runs(args, [&] { check(ctx.execute(), "execute"); });
    const std::string check =
        peers::check_output(args, reinterpret_cast<const float*>(out_buffers.front().data()));
    peers::print_result("kiln", args, t,
                        fmt::format("kiln {} ({})", kiln::kVersion, kiln::kGitCommit), check);
  }
  return 0;
}
