#include "io/mapped_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "io/io_test_util.h"

namespace kiln::io {
namespace {

using testing::ScratchDir;
using testing::write_bytes;

std::string text_of(const MappedFile& f) {
  return std::string(reinterpret_cast<const char*>(f.data()), f.size());
}

void expect_error(const Result<MappedFile>& r, StatusCode code, const std::filesystem::path& path,
                  std::string_view fragment) {
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(path.string()), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
}

TEST(MappedFile, MapsTheWholeFilePageAligned) {
  ScratchDir dir;
  std::string content(10000, '\0');
  for (size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7);
  write_bytes(dir / "f.bin", content);
  Result<MappedFile> f = MappedFile::open(dir / "f.bin");
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(f->size(), content.size());
  EXPECT_EQ(f->bytes().size(), content.size());
  EXPECT_EQ(text_of(*f), content);
  EXPECT_EQ(f->path(), dir / "f.bin");
  EXPECT_EQ(
      reinterpret_cast<uintptr_t>(f->data()) % static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)), 0u);
}

TEST(MappedFile, MoveTransfersTheMapping) {
  ScratchDir dir;
  write_bytes(dir / "a", "first");
  write_bytes(dir / "b", "second");
  MappedFile a = std::move(MappedFile::open(dir / "a")).value();
  MappedFile moved(std::move(a));
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(text_of(moved), "first");
  moved = std::move(MappedFile::open(dir / "b")).value();
  EXPECT_EQ(text_of(moved), "second");
  EXPECT_EQ(moved.path(), dir / "b");
}

TEST(MappedFile, SharedMappingOutlivesTheFileName) {
  ScratchDir dir;
  write_bytes(dir / "w.bin", "weights");
  Result<std::shared_ptr<const MappedFile>> f = MappedFile::open_shared(dir / "w.bin");
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  std::shared_ptr<const void> owner = *f;
  f = not_found("dropped");
  std::filesystem::remove(dir / "w.bin");
  const auto* mapped = static_cast<const MappedFile*>(owner.get());
  EXPECT_EQ(text_of(*mapped), "weights");
}

TEST(MappedFile, ErrorsNameThePath) {
  ScratchDir dir;
  expect_error(MappedFile::open(dir / "missing.plan"), StatusCode::kNotFound, dir / "missing.plan",
               "no such file");
  expect_error(MappedFile::open(dir.path()), StatusCode::kInvalidArgument, dir.path(),
               "is a directory");
  write_bytes(dir / "empty", "");
  expect_error(MappedFile::open(dir / "empty"), StatusCode::kInvalidArgument, dir / "empty",
               "is empty");
  // A FIFO must be refused, not waited on.
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  expect_error(MappedFile::open(dir / "fifo"), StatusCode::kInvalidArgument, dir / "fifo",
               "not a regular file");
}

}  // namespace
}  // namespace kiln::io
