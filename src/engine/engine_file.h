#pragma once
// The engine file's container: a fixed little-endian header, a table of named sections and the
// sections themselves, each at a 64-byte-aligned offset so that data inside a mapped file can be
// used in place. What the sections hold is not this file's business. docs/engine_format.md is the
// spec; the constants below are its numbers.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cpu_features.h"
#include "base/status.h"

namespace kiln::engine {

// 2: a fused convolution's output may share its residual's arena bytes (docs/memory_planning.md),
// which kernels of format 1 do not expect. 3: constants that their layers packed are stored as
// dims only (`weight_dims`), which kilns of format 2 would report as a graph without weights.
inline constexpr uint32_t kEngineFormatVersion = 4;
inline constexpr std::string_view kEngineMagic = "KILNPLAN";
inline constexpr size_t kEngineHeaderSize = 128;
inline constexpr size_t kSectionEntrySize = 48;
inline constexpr size_t kSectionNameSize = 16;
inline constexpr size_t kKilnVersionFieldSize = 48;
// Default and smallest section alignment; the largest is a page, so a mapping (page-aligned) keeps
// every section as aligned in memory as it is in the file.
inline constexpr uint32_t kSectionAlignment = 64;
inline constexpr uint32_t kMaxSectionAlignment = 4096;

// The kiln version written into new engines: "<version>+<git commit>".
std::string current_kiln_version();

// Section names: 1 to 16 characters from [A-Za-z0-9_.-]. InvalidArgument otherwise.
Status check_section_name(std::string_view name);

class EngineFileWriter {
 public:
  // The CPU features the engine's code needs; the loader refuses a CPU without them.
  void set_required_features(CpuFeatureSet features) { required_features_ = features; }

  // Appends a section. InvalidArgument for a bad or repeated name, or an alignment that is not a
  // power of two in [kSectionAlignment, kMaxSectionAlignment].
  Status add_section(std::string name, std::string bytes, uint32_t alignment = kSectionAlignment);
  Status add_section(std::string name, std::span<const std::byte> bytes,
                     uint32_t alignment = kSectionAlignment);
  // A section made of `pieces` in order, written from where they are; `keep_alive` owns what they
  // view until the writer is gone.
  Status add_section(std::string name, std::vector<std::string_view> pieces,
                     std::shared_ptr<const void> keep_alive,
                     uint32_t alignment = kSectionAlignment);

  // The complete file.
  std::string to_bytes() const;
  // Writes the file atomically (io::write_file_atomic): on failure nothing appears under `path`
  // and a file already there is left as it was.
  Status write(const std::filesystem::path& path) const;

 private:
  struct Section {
    std::string name;
    std::vector<std::string_view> pieces;    // the section's bytes, in order
    std::shared_ptr<const void> keep_alive;  // owns what the pieces view
    uint32_t alignment;
    size_t size() const;
  };
  // Header + section table + the padding before the first section, with the checksum filled in;
  // `body` receives views of the rest (padding and section bytes) in file order.
  std::string head_and_body(std::vector<std::string_view>& body) const;

  CpuFeatureSet required_features_ = 0;
  std::vector<Section> sections_;
};

struct SectionInfo {
  std::string name;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t alignment = 0;
};

struct ReadOptions {
  // Off only to look at an engine built for another machine (kiln inspect).
  bool check_cpu = true;
  // An ISA cap ("avx2", ...; see cpu_features_with_cap) to check against instead of KILN_MAX_ISA.
  std::optional<std::string> isa_cap;
};

// A loaded engine file. The section spans point into the bytes, which owner() keeps alive; copies
// share them.
class EngineFile {
 public:
  uint32_t format_version() const { return format_version_; }
  // Informational: the kiln that wrote the file.
  const std::string& kiln_version() const { return kiln_version_; }
  CpuFeatureSet required_features() const { return required_features_; }
  uint32_t checksum() const { return checksum_; }
  uint64_t file_size() const { return bytes_.size(); }
  // The path, or the name given to parse_engine_file; for messages.
  const std::string& source() const { return source_; }
  // In table order.
  const std::vector<SectionInfo>& sections() const { return sections_; }

  // The section's bytes, aligned in memory as the table says; nullopt when there is none by that
  // name.
  std::optional<std::span<const std::byte>> section(std::string_view name) const;

  // Keeps the bytes alive, e.g. for Tensor::borrow of weights inside a section.
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  friend Result<EngineFile> parse_engine_file(std::span<const std::byte>,
                                              std::shared_ptr<const void>, std::string_view,
                                              const ReadOptions&);
  uint32_t format_version_ = 0;
  std::string kiln_version_;
  CpuFeatureSet required_features_ = 0;
  uint32_t checksum_ = 0;
  std::string source_;
  std::vector<SectionInfo> sections_;
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
};

// Maps the file and parses it. Besides parse_engine_file's errors: NotFound, IoError, and
// InvalidArgument for a directory.
Result<EngineFile> read_engine_file(const std::filesystem::path& path,
                                    const ReadOptions& options = {});

// Checks and parses an engine held in memory; `owner` keeps `bytes` alive and is shared with the
// result. When `bytes` is not aligned to its largest section alignment it is copied into aligned
// memory. Errors, in the order they are checked (docs/engine_format.md):
//   Corrupt          empty
//   InvalidArgument  not a kiln engine (wrong magic; an ONNX model is recognised and named)
//   Corrupt          a magic with one wrong byte, truncated, extra bytes, checksum mismatch
//   Unsupported      another format version
//   Corrupt          bad header fields or section table (out of bounds, misaligned, overlapping,
//                    duplicate or malformed names)
//   InvalidArgument  a bad KILN_MAX_ISA / isa_cap value (only when the CPU is checked)
//   Unsupported      CPU features this machine lacks or the ISA cap hides, each named
// Messages start with `source`.
Result<EngineFile> parse_engine_file(std::span<const std::byte> bytes,
                                     std::shared_ptr<const void> owner, std::string_view source,
                                     const ReadOptions& options = {});
Result<EngineFile> parse_engine_file(std::shared_ptr<const std::string> bytes,
                                     std::string_view source, const ReadOptions& options = {});

}  // namespace kiln::engine
