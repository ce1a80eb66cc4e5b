#pragma once
// The images `kiln pipeline` runs over: the .jpg/.jpeg/.png/.bmp files of one folder (not
// recursive), in name order so that runs are reproducible. Other files are ignored.

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::cli::pipeline {

// NotFound for a missing folder, InvalidArgument for a folder without images; both name it.
Result<std::vector<std::filesystem::path>> list_images(const std::filesystem::path& folder);

// One label per line (trailing '\r' and spaces dropped); the error names the file.
Result<std::vector<std::string>> read_labels(const std::filesystem::path& path);

}  // namespace kiln::cli::pipeline
