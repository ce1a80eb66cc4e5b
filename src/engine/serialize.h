#pragma once
// Plan <-> engine file. The container (header, section table, checksum, CPU features) is
// engine/engine_file.h; this file defines the two sections kiln writes into it:
//   "meta"    — UTF-8 JSON describing the graph, layers, tactics, profiles and memory plans;
//   "weights" — every constant tensor, each at a 64-byte-aligned offset, little-endian, dense.
// docs/engine_format.md is the spec.

#include <filesystem>
#include <string>

#include "base/status.h"
#include "engine/plan.h"

namespace kiln::engine {

// The engine file's bytes.
Result<std::string> serialize_plan(const Plan& plan);

// Writes atomically: a crash mid-write never leaves a half engine under `path`.
Status save_plan(const Plan& plan, const std::filesystem::path& path);

struct LoadOptions {
  // Refuse an engine whose tactics need CPU features this machine lacks (inspect turns it off).
  bool check_cpu = true;
};

// What the container says about an engine file, for inspect and load reports.
struct EngineFileInfo {
  uint32_t format_version = 0;
  std::string kiln_version;  // of the kiln that wrote it
  uint64_t file_size = 0;
  uint32_t checksum = 0;
};

// Maps the file; weights are used in place and keep the mapping alive.
Result<Plan> load_plan(const std::filesystem::path& path, const LoadOptions& options = {},
                       EngineFileInfo* info = nullptr);

}  // namespace kiln::engine
