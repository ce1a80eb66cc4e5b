#pragma once
// Whole-file reads and atomic writes with errors that name the path.

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::io {

// Reads the whole file. NotFound when it does not exist, InvalidArgument for a directory, IoError
// when opening or reading fails.
Result<std::string> read_file(const std::filesystem::path& path);

// Writes `bytes` to a new temporary file in path's folder, flushes it to disk and renames it over
// `path`, so readers see either the old file or the complete new one. On any failure the temporary
// file is removed and `path` is left as it was. The folder is flushed too, so once this returns OK
// the new file survives a power loss.
Status write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// The same for a file made of several pieces written one after the other, so that large outputs
// need not be joined into one buffer first.
Status write_file_atomic(const std::filesystem::path& path,
                         std::span<const std::string_view> pieces);

}  // namespace kiln::io
