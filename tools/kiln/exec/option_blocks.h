#pragma once
// The descriptive blocks `kiln exec` prints before it works, as trtexec does ("=== Model Options
// ===" ...), plus kiln's "=== CPU Information ===", and the --dumpLayerInfo lines.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec/environment.h"
#include "exec/exec_options.h"

namespace kiln::cli::exec {

std::vector<std::string> option_block_lines(const ExecOptions& o, const Environment& env);

// One line per layer of layer_info_json(): name, type, tactic, precision and tensor dims.
std::vector<std::string> layer_info_lines(const nlohmann::ordered_json& info);

}  // namespace kiln::cli::exec
