#pragma once
// Reads the files kiln report takes: benchmark summaries (schema kiln.exec.summary, versions 2 and
// 3: `kiln exec --exportSummary`, `kiln sweep`, `kiln parse-trtexec`, bench/peers) and per-layer
// profiles (`--exportProfile`, kiln's or trtexec's). Pure: JSON in, figures out; a malformed
// file is an error naming the file and the field.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "report/run_data.h"

namespace kiln::cli::report {

// The summary schema versions this reader accepts: 2 (no `accuracy`, source.tool "kiln exec" or
// "trtexec") up to the version kiln writes.
inline constexpr int kOldestReadableSummaryVersion = 2;

// The backend a summary's source.tool names: "kiln exec" (and any "kiln ...") is "kiln"; other
// tools ("trtexec", "onnxruntime", "pytorch", "opencv", ...) as written, in lower case.
std::string backend_of_tool(std::string_view tool);

// `file` names the summary in errors and becomes Run::file.
Result<Run> read_summary(const nlohmann::json& summary, const std::string& file);

// True for a --exportProfile document: an array that starts with {"count": N}.
bool looks_like_profile(const nlohmann::json& j);

// [{"count": N}, {"name", "timeMs", "averageMs", "medianMs", "percentage"}, ...]; trtexec 7.x's
// files without "averageMs" take timeMs / count.
Result<std::vector<LayerTime>> read_profile(const nlohmann::json& profile, const std::string& file);

}  // namespace kiln::cli::report
