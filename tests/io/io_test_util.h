#pragma once
// Helpers shared by the io tests: a scratch folder and a hand-rolled .npy byte builder that is
// independent of the code under test.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io::testing {

// A fresh folder under gtest's temp dir, removed with its contents at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::path(::testing::TempDir()) /
            (std::string("kiln_io_") + info->name() + "_" + std::to_string(::getpid()) + "_" +
             std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  // Names of everything in the folder, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

// "\x93NUMPY", the version, the little-endian header length (2 bytes for version 1, else 4), the
// header text exactly as given, then the data.
inline std::string npy_bytes(int major, std::string_view header, std::string_view data) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  const size_t width = major == 1 ? 2 : 4;
  for (size_t i = 0; i < width; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  out += data;
  return out;
}

inline std::string bytes_of(std::initializer_list<unsigned char> bytes) {
  return std::string(bytes.begin(), bytes.end());
}

inline void write_bytes(const std::filesystem::path& path, std::string_view bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

}  // namespace kiln::io::testing
