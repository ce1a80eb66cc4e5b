#pragma once
// A whole file mapped read-only into memory. Weights in an engine point into the mapping, so the
// engine keeps it alive through a shared_ptr (open_shared) for as long as any of them is used.
//
// The mapping is private and read-only: if another process truncates the file while it is mapped,
// touching the lost pages raises SIGBUS; kiln writes engines atomically (a new file is renamed into
// place), which never does that to a file someone has mapped.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

#include "base/status.h"

namespace kiln::io {

class MappedFile {
 public:
  // Errors name the path: NotFound (no such file), InvalidArgument (a directory, not a regular
  // file, or an empty file, which cannot be mapped), IoError (open, stat or mmap failed).
  static Result<MappedFile> open(const std::filesystem::path& path);
  static Result<std::shared_ptr<const MappedFile>> open_shared(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Page-aligned start of the file's bytes.
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void unmap();

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln::io
