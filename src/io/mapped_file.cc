#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <limits>
#include <system_error>
#include <utility>

namespace kiln::io {
namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

}  // namespace

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is rejected below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return not_found("'{}': no such file", path.string());
    return io_error("cannot open '{}': {}", path.string(), errno_text(err));
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return io_error("cannot stat '{}': {}", path.string(), errno_text(errno));
  if (S_ISDIR(st.st_mode))
    return invalid_argument("'{}' is a directory, not a file", path.string());
  if (!S_ISREG(st.st_mode)) {
    return invalid_argument("'{}' is not a regular file and cannot be mapped", path.string());
  }
  if (st.st_size == 0) return invalid_argument("'{}' is empty (0 bytes)", path.string());
  if (static_cast<uintmax_t>(st.st_size) > std::numeric_limits<size_t>::max()) {
    return io_error("'{}' ({} bytes) is too large to map", path.string(), st.st_size);
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) {
    return io_error("cannot map '{}' ({} bytes): {}", path.string(), size, errno_text(errno));
  }
  // The mapping holds its own reference to the file; the descriptor is closed on return.
  return MappedFile(path, static_cast<const std::byte*>(addr), size);
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open_shared(
    const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(MappedFile file, open(path));
  return std::shared_ptr<const MappedFile>(std::make_shared<MappedFile>(std::move(file)));
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { unmap(); }

void MappedFile::unmap() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace kiln::io
