#include "passes/pass.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kiln::passes {

void PassLog::add(std::string_view pass, std::string message) {
  entries_.push_back(PassLogEntry{std::string(pass), std::move(message)});
}

void PassLog::fused(std::string_view pass, std::span<const std::string> onnx_nodes,
                    std::string_view result_op, std::string_view result_name) {
  add(pass, fmt::format("fused {} into {} '{}'", join_origins(onnx_nodes), result_op, result_name));
}

size_t PassLog::count(std::string_view pass) const {
  return static_cast<size_t>(std::count_if(entries_.begin(), entries_.end(),
                                           [&](const PassLogEntry& e) { return e.pass == pass; }));
}

std::string join_origins(std::span<const std::string> names) {
  return fmt::format("{}", fmt::join(names, " + "));
}

}  // namespace kiln::passes
