// The engine file reader: checks, in the order docs/engine_format.md gives, everything a damaged,
// foreign or hostile file could get wrong before handing out a single pointer into it.

#include "engine/engine_file.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <unordered_set>

#include "base/crc32c.h"
#include "engine/engine_file_layout.h"
#include "io/mapped_file.h"

namespace kiln::engine {
namespace {

namespace L = layout;
using Bytes = std::span<const std::byte>;

// A protobuf starting like an ONNX ModelProto: field 1 (ir_version) as a small varint, then another
// field of a low number.
bool looks_like_onnx(Bytes b, std::string_view source) {
  if (source.ends_with(".onnx")) return true;
  if (b.size() < 3) return false;
  const auto u = [&](size_t i) { return std::to_integer<uint8_t>(b[i]); };
  const int next_field = u(2) >> 3, wire_type = u(2) & 7;
  return u(0) == 0x08 && u(1) >= 1 && u(1) <= 20 && next_field >= 2 && next_field <= 20 &&
         (wire_type == 0 || wire_type == 2);
}

Status check_magic(Bytes b, std::string_view src) {
  if (b.empty()) {
    return corrupt("'{}' is empty (0 bytes): not a kiln engine, or a truncated one", src);
  }
  const size_t n = std::min(b.size(), kEngineMagic.size());
  size_t differing = 0;
  for (size_t i = 0; i < n; ++i) {
    differing += b[i] != static_cast<std::byte>(kEngineMagic[i]) ? 1 : 0;
  }
  if (differing == 0) return Status::ok();
  // Other files hardly ever share 7 of the 8 bytes; a single wrong byte is damage.
  if (differing == 1 && n == kEngineMagic.size()) {
    return corrupt("'{}': the magic is damaged (one byte differs from \"{}\")", src, kEngineMagic);
  }
  if (looks_like_onnx(b, src)) {
    return invalid_argument(
        "'{}' is not a kiln engine: it looks like an ONNX model; build an engine from it with "
        "`kiln build`",
        src);
  }
  return invalid_argument("'{}' is not a kiln engine (it does not start with \"{}\")", src,
                          kEngineMagic);
}

// Size and checksum: whether the bytes are the file that was written, whatever its format version.
Status check_integrity(Bytes b, std::string_view src) {
  if (b.size() < L::kFileSize + 8) {
    return corrupt("'{}': truncated: the file has {} bytes, less than the {}-byte header", src,
                   b.size(), kEngineHeaderSize);
  }
  const uint64_t declared = L::get_le64(b, L::kFileSize);
  if (b.size() < declared) {
    return corrupt("'{}': truncated: expected {} bytes, file has {}", src, declared, b.size());
  }
  if (b.size() > declared) {
    return corrupt(
        "'{}': the header says the file has {} bytes, but it has {} (extra bytes at the end)", src,
        declared, b.size());
  }
  if (b.size() < L::kStablePrefix) {
    return corrupt("'{}': truncated: the file has {} bytes, less than the {}-byte header", src,
                   b.size(), kEngineHeaderSize);
  }
  const uint32_t stored = L::get_le32(b, L::kChecksum);
  uint32_t crc = crc32c(b.data(), L::kChecksum);
  crc = crc32c_extend(crc, b.data() + L::kChecksum + 4, b.size() - L::kChecksum - 4);
  if (crc != stored) {
    return corrupt(
        "'{}': checksum mismatch (header 0x{:08x}, contents 0x{:08x}): the file is damaged", src,
        stored, crc);
  }
  return Status::ok();
}

// A NUL-padded text field: printable ASCII, then only NULs.
Result<std::string> fixed_text(Bytes b, size_t at, size_t width, std::string_view what,
                               std::string_view src) {
  std::string text;
  size_t i = 0;
  for (; i < width && b[at + i] != std::byte{0}; ++i) {
    const auto c = std::to_integer<unsigned char>(b[at + i]);
    if (c < 0x20 || c > 0x7e) return corrupt("'{}': {} has the byte 0x{:02x}", src, what, c);
    text += static_cast<char>(c);
  }
  for (; i < width; ++i) {
    if (b[at + i] != std::byte{0}) return corrupt("'{}': {} is not NUL-padded", src, what);
  }
  return text;
}

bool all_zero(Bytes b, size_t at, size_t width) {
  return std::all_of(b.begin() + at, b.begin() + at + width,
                     [](std::byte x) { return x == std::byte{0}; });
}

Status check_version(Bytes b, std::string_view src) {
  const uint32_t version = L::get_le32(b, L::kFormatVersion);
  if (version == kEngineFormatVersion) return Status::ok();
  Result<std::string> built_by = fixed_text(b, L::kKilnVersion, kKilnVersionFieldSize, "", src);
  return unsupported(
      "'{}' is an engine in format version {} (built by kiln {}); this kiln ({}) reads format "
      "version {} only: rebuild the engine with this kiln",
      src, version, built_by.is_ok() ? *built_by : "of unknown version", current_kiln_version(),
      kEngineFormatVersion);
}

struct Header {
  std::string kiln_version;
  CpuFeatureSet required_features = 0;
  uint64_t table_offset = 0;
  uint32_t section_count = 0;
};

Result<Header> parse_header(Bytes b, std::string_view src) {
  const uint32_t header_size = L::get_le32(b, L::kHeaderSize);
  if (header_size != kEngineHeaderSize) {
    return corrupt("'{}': header size {}; format version {} has {}", src, header_size,
                   kEngineFormatVersion, kEngineHeaderSize);
  }
  if (b.size() < kEngineHeaderSize) {
    return corrupt("'{}': truncated: the file has {} bytes, less than the {}-byte header", src,
                   b.size(), kEngineHeaderSize);
  }
  const uint32_t entry_size = L::get_le32(b, L::kEntrySize);
  if (entry_size != kSectionEntrySize) {
    return corrupt("'{}': section table entries of {} bytes; format version {} has {}", src,
                   entry_size, kEngineFormatVersion, kSectionEntrySize);
  }
  if (!all_zero(b, L::kReserved0, 4) ||
      !all_zero(b, L::kReserved1, kEngineHeaderSize - L::kReserved1)) {
    return corrupt("'{}': reserved header bytes are not zero", src);
  }
  Header h;
  KILN_ASSIGN_OR_RETURN(h.kiln_version, fixed_text(b, L::kKilnVersion, kKilnVersionFieldSize,
                                                   "the kiln version", src));
  h.required_features = L::get_le64(b, L::kRequiredFeatures);
  h.table_offset = L::get_le64(b, L::kTableOffset);
  h.section_count = L::get_le32(b, L::kSectionCount);
  return h;
}

// A byte range of the file; `what` names it in messages.
struct Extent {
  uint64_t begin = 0, size = 0;
  std::string what;
};

// Reads one table entry; the table itself is known to lie inside the file.
Result<SectionInfo> parse_entry(Bytes b, size_t at, size_t index, std::string_view src) {
  SectionInfo s;
  const std::string what = fmt::format("section table entry {}: the name", index);
  KILN_ASSIGN_OR_RETURN(s.name, fixed_text(b, at + L::kEntryName, kSectionNameSize, what, src));
  const Status name_ok = check_section_name(s.name);
  if (!name_ok.is_ok()) {
    return corrupt("'{}': section table entry {}: {}", src, index, name_ok.message());
  }
  s.offset = L::get_le64(b, at + L::kEntryOffset);
  s.size = L::get_le64(b, at + L::kEntrySizeField);
  s.alignment = L::get_le32(b, at + L::kEntryAlignment);
  if (!all_zero(b, at + L::kEntryReserved, kSectionEntrySize - L::kEntryReserved)) {
    return corrupt("'{}': section '{}': reserved bytes are not zero", src, s.name);
  }
  if (!std::has_single_bit(s.alignment) || s.alignment < kSectionAlignment ||
      s.alignment > kMaxSectionAlignment) {
    return corrupt("'{}': section '{}': alignment {} is not a power of two in [{}, {}]", src,
                   s.name, s.alignment, kSectionAlignment, kMaxSectionAlignment);
  }
  if (s.offset % s.alignment != 0) {
    return corrupt("'{}': section '{}': offset {} is not a multiple of its alignment {}", src,
                   s.name, s.offset, s.alignment);
  }
  // Overflow-safe form of offset + size <= file size.
  if (s.offset > b.size() || s.size > b.size() - s.offset) {
    return corrupt(
        "'{}': section '{}' ({} bytes at offset {}) extends past the end of the file ({} bytes)",
        src, s.name, s.size, s.offset, b.size());
  }
  return s;
}

// No two non-empty extents share a byte.
Status check_disjoint(std::vector<Extent> extents, std::string_view src) {
  std::erase_if(extents, [](const Extent& e) { return e.size == 0; });
  // Stable: of two extents starting together, the one listed first (the header) is named second.
  std::stable_sort(extents.begin(), extents.end(),
                   [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < extents.size(); ++i) {
    const Extent& prev = extents[i - 1];
    if (extents[i].begin < prev.begin + prev.size) {
      return corrupt("'{}': {} (bytes {}..{}) overlaps {} (bytes {}..{})", src, extents[i].what,
                     extents[i].begin, extents[i].begin + extents[i].size, prev.what, prev.begin,
                     prev.begin + prev.size);
    }
  }
  return Status::ok();
}

Result<std::vector<SectionInfo>> parse_table(Bytes b, const Header& h, std::string_view src) {
  const uint64_t table_size = uint64_t{h.section_count} * kSectionEntrySize;
  if (h.table_offset < kEngineHeaderSize || h.table_offset % 8 != 0 || h.table_offset > b.size() ||
      table_size > b.size() - h.table_offset) {
    return corrupt(
        "'{}': the section table ({} entries at offset {}) does not fit in the file ({} bytes) "
        "after the header",
        src, h.section_count, h.table_offset, b.size());
  }
  std::vector<SectionInfo> sections;
  std::unordered_set<std::string> names;  // a hash set: a hostile table may have millions
  std::vector<Extent> extents = {{0, kEngineHeaderSize, "the header"},
                                 {h.table_offset, table_size, "the section table"}};
  for (size_t i = 0; i < h.section_count; ++i) {
    const size_t at = static_cast<size_t>(h.table_offset) + i * kSectionEntrySize;
    KILN_ASSIGN_OR_RETURN(SectionInfo s, parse_entry(b, at, i, src));
    if (!names.insert(s.name).second) {
      return corrupt("'{}': section '{}' appears twice", src, s.name);
    }
    extents.push_back({s.offset, s.size, fmt::format("section '{}'", s.name)});
    sections.push_back(std::move(s));
  }
  KILN_RETURN_IF_ERROR(check_disjoint(std::move(extents), src));
  return sections;
}

std::string comma_list(CpuFeatureSet set) {
  std::string s = cpu_features_to_string(set);
  std::string out;
  for (char c : s) out += c == ' ' ? std::string(", ") : std::string(1, c);
  return out;
}

Status check_cpu(CpuFeatureSet required, const std::string& kiln_version,
                 const ReadOptions& options, std::string_view src) {
  Result<CpuFeatureSet> host =
      options.isa_cap ? cpu_features_with_cap(*options.isa_cap) : cpu_features_from_env();
  if (!host.is_ok()) return host.status().with_context(fmt::format("loading '{}'", src));
  const CpuFeatureSet missing = required & ~*host;
  if (missing == 0) return Status::ok();
  const CpuFeatureSet detected = detected_cpu_features();
  const CpuFeatureSet unknown = missing & ~kKnownCpuFeatures;
  const CpuFeatureSet lacking = missing & kKnownCpuFeatures & ~detected;
  const CpuFeatureSet hidden = missing & kKnownCpuFeatures & detected;
  std::vector<std::string> parts;
  if (lacking != 0) {
    parts.push_back(fmt::format("this CPU ({}) lacks {}", cpu_brand_string(), comma_list(lacking)));
  }
  if (hidden != 0) {
    const std::string cap = options.isa_cap ? fmt::format("the ISA cap '{}'", *options.isa_cap)
                                            : fmt::format("{}={}", kMaxIsaEnv, isa_cap_from_env());
    parts.push_back(fmt::format("{} hides {}", cap, comma_list(hidden)));
  }
  if (unknown != 0) {
    parts.push_back(fmt::format("{} {} unknown to this kiln ({}; the engine was built by kiln {})",
                                comma_list(unknown), std::popcount(unknown) == 1 ? "is" : "are",
                                current_kiln_version(), kiln_version));
  }
  return unsupported(
      "'{}' needs the CPU features {}, which this machine cannot provide: {}. Build the engine on "
      "this machine",
      src, comma_list(missing), fmt::join(parts, "; "));
}

// A copy of `b` at an address aligned to `alignment`, owned by the returned pointer.
std::shared_ptr<const void> aligned_copy(Bytes b, size_t alignment) {
  auto* p = static_cast<std::byte*>(::operator new (b.size(), std::align_val_t{alignment}));
  std::memcpy(p, b.data(), b.size());
  return std::shared_ptr<const void>(p, [alignment](const void* q) {
    ::operator delete (const_cast<void*>(q), std::align_val_t{alignment});
  });
}

}  // namespace

std::optional<std::span<const std::byte>> EngineFile::section(std::string_view name) const {
  for (const SectionInfo& s : sections_) {
    if (s.name == name) {
      return bytes_.subspan(static_cast<size_t>(s.offset), static_cast<size_t>(s.size));
    }
  }
  return std::nullopt;
}

Result<EngineFile> parse_engine_file(std::span<const std::byte> bytes,
                                     std::shared_ptr<const void> owner, std::string_view source,
                                     const ReadOptions& options) {
  KILN_RETURN_IF_ERROR(check_magic(bytes, source));
  KILN_RETURN_IF_ERROR(check_integrity(bytes, source));
  KILN_RETURN_IF_ERROR(check_version(bytes, source));
  KILN_ASSIGN_OR_RETURN(Header header, parse_header(bytes, source));
  KILN_ASSIGN_OR_RETURN(std::vector<SectionInfo> sections, parse_table(bytes, header, source));
  if (options.check_cpu) {
    KILN_RETURN_IF_ERROR(check_cpu(header.required_features, header.kiln_version, options, source));
  }
  uint32_t max_alignment = kSectionAlignment;
  for (const SectionInfo& s : sections) max_alignment = std::max(max_alignment, s.alignment);
  if (reinterpret_cast<uintptr_t>(bytes.data()) % max_alignment != 0) {
    owner = aligned_copy(bytes, max_alignment);
    bytes = {static_cast<const std::byte*>(owner.get()), bytes.size()};
  }
  EngineFile file;
  file.format_version_ = kEngineFormatVersion;
  file.kiln_version_ = std::move(header.kiln_version);
  file.required_features_ = header.required_features;
  file.checksum_ = L::get_le32(bytes, L::kChecksum);
  file.source_ = std::string(source);
  file.sections_ = std::move(sections);
  file.bytes_ = bytes;
  file.owner_ = std::move(owner);
  return file;
}

Result<EngineFile> parse_engine_file(std::shared_ptr<const std::string> bytes,
                                     std::string_view source, const ReadOptions& options) {
  const std::span<const std::byte> span(reinterpret_cast<const std::byte*>(bytes->data()),
                                        bytes->size());
  return parse_engine_file(span, std::move(bytes), source, options);
}

Result<EngineFile> read_engine_file(const std::filesystem::path& path, const ReadOptions& options) {
  Result<std::shared_ptr<const io::MappedFile>> mapped = io::MappedFile::open_shared(path);
  if (!mapped.is_ok()) {
    // An empty file cannot be mapped; it gets the same message as an empty buffer.
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) == 0 &&
        !ec) {
      return parse_engine_file(std::span<const std::byte>(), nullptr, path.string(), options);
    }
    return mapped.status();
  }
  std::shared_ptr<const io::MappedFile> file = std::move(mapped).value();
  const std::span<const std::byte> bytes = file->bytes();
  return parse_engine_file(bytes, std::move(file), path.string(), options);
}

}  // namespace kiln::engine
