#pragma once
// `kiln list-ops`: the supported operators and the ONNX versions implemented, as text or as the
// Markdown of docs/operators.md (which a test keeps in sync).

#include <string>

namespace kiln::cli {

std::string list_ops_markdown();
std::string list_ops_text();

}  // namespace kiln::cli
