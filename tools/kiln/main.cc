// kiln command line: one subcommand per job. Each subcommand's work lives in its own file; this
// file only declares flags and reports errors.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "kiln/version.h"
#include "list_ops.h"
#include "run_command.h"

namespace {

void add_run(CLI::App& app, kiln::cli::RunOptions& o) {
  auto* run =
      app.add_subcommand("run", "Import an ONNX model and run it with the reference executor");
  run->add_option("--onnx", o.onnx, "ONNX model file")->required();
  run->add_option("--shapes", o.shapes, "Input shapes: name:1x3x224x224[,name2:...]");
  run->add_option("--loadInputs", o.load_inputs,
                  "Input files: name:file.npy or name:raw.bin[,...]");
  run->add_option("--exportOutput", o.export_output, "Write outputs as JSON (trtexec's format)");
  run->add_option("--iterations", o.iterations, "Timed runs")->capture_default_str();
  run->add_option("--seed", o.seed, "Seed for random inputs")->capture_default_str();
  run->add_option("--printValues", o.print_values, "Values printed per output")
      ->capture_default_str();
}

}  // namespace

int run_cli(int argc, char** argv);

// Last line of defence: anything thrown past the Status channel (out of memory, a library's
// exception) is reported as a message and exit code 1, never an abort.
int main(int argc, char** argv) {
  try {
    return run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "kiln: error: out of memory\n");
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln: error: Internal: {}\n", e.what());
  }
  return 1;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"kiln: ONNX models to fast CPU inference engines"};
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("kiln {} ({})", kiln::kVersion, kiln::kGitCommit));
  kiln::cli::RunOptions run_opts;
  add_run(app, run_opts);
  std::string list_format = "text";
  auto* list = app.add_subcommand("list-ops", "List the supported operators and versions");
  list->add_option("--format", list_format, "text or md")->check(CLI::IsMember({"text", "md"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  kiln::Status status;
  if (app.got_subcommand("run")) {
    status = kiln::cli::run_command(run_opts, std::cout);
  } else if (app.got_subcommand("list-ops")) {
    std::cout << (list_format == "md" ? kiln::cli::list_ops_markdown()
                                      : kiln::cli::list_ops_text());
  }
  if (!status.is_ok()) {
    std::cout.flush();
    fmt::print(stderr, "kiln: error: {}\n", status.to_string());
    return 1;
  }
  return 0;
}
