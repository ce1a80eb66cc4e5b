#pragma once
// `kiln sweep`: one model, every precision x batch size. Builds one engine per precision (a
// profile spanning the batches), cached in <out>/engines/ under a content hash so a rerun reuses
// it; benchmarks every batch with `kiln exec`'s warm-up, iteration and statistics policy; writes
// one
// --exportSummary file per run and an index (docs/exec.md, "kiln sweep"), the input of a report.

#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "exec/exec_options.h"

namespace kiln::cli::exec {

inline constexpr const char* kSweepIndexSchema = "kiln.sweep.index";
inline constexpr int kSweepIndexSchemaVersion = 1;

struct SweepOptions {
  std::string onnx;                             // --onnx
  std::string out;                              // --out: results folder (created)
  std::vector<std::string> precisions{"fp32"};  // --precisions
  std::vector<int64_t> batches;                 // --batch
  std::string calib;                            // --calib (int8, issue 5)
  // The benchmark policy and shapes (--iterations, --warmUp, --duration, --percentile,
  // --infStreams, --shapes, ...), validated by the exec parser.
  ExecOptions exec;
  bool help = false;
  std::vector<std::string> args;  // after "sweep", as given
};

// Parses the arguments after "kiln sweep". Sweep's own flags plus exec's policy flags; any other
// exec flag, an unknown flag (with the closest one) or a bad value is an error naming it.
Result<SweepOptions> parse_sweep_args(std::span<const std::string> args);

std::string sweep_help();

// 64-bit FNV-1a, the engine cache key's hash (a cache key, not a cryptographic digest).
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 0xcbf29ce484222325ULL);

// The whole command, as exec_main: returns the exit code.
int sweep_main(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli::exec
