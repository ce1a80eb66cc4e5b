// EngineFileWriter and what the writer and reader share (names, version string).

#include <array>
#include <bit>

#include "base/crc32c.h"
#include "engine/engine_file.h"
#include "engine/engine_file_layout.h"
#include "io/file_util.h"
#include "kiln/version.h"

namespace kiln::engine {
namespace {

namespace L = layout;

uint64_t align_up(uint64_t v, uint64_t alignment) { return (v + alignment - 1) & ~(alignment - 1); }

bool valid_alignment(uint32_t a) {
  return std::has_single_bit(a) && a >= kSectionAlignment && a <= kMaxSectionAlignment;
}

// Zeros that padding views point at; no gap is longer than the largest alignment.
const std::array<char, kMaxSectionAlignment> kZeros{};

std::string_view padding(uint64_t bytes) { return {kZeros.data(), static_cast<size_t>(bytes)}; }

}  // namespace

std::string current_kiln_version() { return fmt::format("{}+{}", kVersion, kGitCommit); }

Status check_section_name(std::string_view name) {
  if (name.empty() || name.size() > kSectionNameSize) {
    return invalid_argument("section name '{}' must have 1 to {} characters", name,
                            kSectionNameSize);
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) {
      return invalid_argument(
          "section name '{}' has the character 0x{:02x}; allowed are A-Z a-z 0-9 _ . -", name,
          static_cast<unsigned char>(c));
    }
  }
  return Status::ok();
}

Status EngineFileWriter::add_section(std::string name, std::string bytes, uint32_t alignment) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  std::vector<std::string_view> pieces;
  if (!owned->empty()) pieces.emplace_back(*owned);
  return add_section(std::move(name), std::move(pieces), std::move(owned), alignment);
}

Status EngineFileWriter::add_section(std::string name, std::vector<std::string_view> pieces,
                                     std::shared_ptr<const void> keep_alive, uint32_t alignment) {
  KILN_RETURN_IF_ERROR(check_section_name(name));
  if (!valid_alignment(alignment)) {
    return invalid_argument("section '{}': alignment {} is not a power of two in [{}, {}]", name,
                            alignment, kSectionAlignment, kMaxSectionAlignment);
  }
  for (const Section& s : sections_) {
    if (s.name == name) return invalid_argument("section '{}' is added twice", name);
  }
  sections_.push_back({std::move(name), std::move(pieces), std::move(keep_alive), alignment});
  return Status::ok();
}

size_t EngineFileWriter::Section::size() const {
  size_t n = 0;
  for (std::string_view p : pieces) n += p.size();
  return n;
}

Status EngineFileWriter::add_section(std::string name, std::span<const std::byte> bytes,
                                     uint32_t alignment) {
  return add_section(std::move(name),
                     std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                     alignment);
}

std::string EngineFileWriter::head_and_body(std::vector<std::string_view>& body) const {
  const uint64_t table_offset = kEngineHeaderSize;
  uint64_t cursor = table_offset + sections_.size() * kSectionEntrySize;
  std::vector<uint64_t> offsets;
  for (const Section& s : sections_) {
    offsets.push_back(align_up(cursor, s.alignment));
    cursor = offsets.back() + s.size();
  }
  const uint64_t head_size = sections_.empty() ? cursor : offsets.front();
  std::string head(static_cast<size_t>(head_size), '\0');
  head.replace(L::kMagic, kEngineMagic.size(), kEngineMagic);
  L::put_le32(head, L::kFormatVersion, kEngineFormatVersion);
  L::put_le32(head, L::kHeaderSize, kEngineHeaderSize);
  L::put_le64(head, L::kFileSize, cursor);
  L::put_le64(head, L::kRequiredFeatures, required_features_);
  L::put_le64(head, L::kTableOffset, table_offset);
  L::put_le32(head, L::kSectionCount, static_cast<uint32_t>(sections_.size()));
  L::put_le32(head, L::kEntrySize, kSectionEntrySize);
  const std::string version = current_kiln_version().substr(0, kKilnVersionFieldSize);
  head.replace(L::kKilnVersion, version.size(), version);

  body.clear();
  uint64_t end_of_previous = head_size;
  for (size_t i = 0; i < sections_.size(); ++i) {
    const size_t entry = static_cast<size_t>(table_offset) + i * kSectionEntrySize;
    head.replace(entry + L::kEntryName, sections_[i].name.size(), sections_[i].name);
    L::put_le64(head, entry + L::kEntryOffset, offsets[i]);
    L::put_le64(head, entry + L::kEntrySizeField, sections_[i].size());
    L::put_le32(head, entry + L::kEntryAlignment, sections_[i].alignment);
    if (offsets[i] > end_of_previous) body.push_back(padding(offsets[i] - end_of_previous));
    body.insert(body.end(), sections_[i].pieces.begin(), sections_[i].pieces.end());
    end_of_previous = offsets[i] + sections_[i].size();
  }

  // The checksum covers every byte of the file except its own four.
  uint32_t crc = crc32c(head.data(), L::kChecksum);
  crc = crc32c_extend(crc, head.data() + L::kChecksum + 4, head.size() - L::kChecksum - 4);
  for (std::string_view piece : body) crc = crc32c_extend(crc, piece.data(), piece.size());
  L::put_le32(head, L::kChecksum, crc);
  return head;
}

std::string EngineFileWriter::to_bytes() const {
  std::vector<std::string_view> body;
  std::string out = head_and_body(body);
  for (std::string_view piece : body) out += piece;
  return out;
}

Status EngineFileWriter::write(const std::filesystem::path& path) const {
  std::vector<std::string_view> pieces;
  const std::string head = head_and_body(pieces);
  pieces.insert(pieces.begin(), head);
  return io::write_file_atomic(path, pieces)
      .with_context(fmt::format("writing engine '{}'", path.string()));
}

}  // namespace kiln::engine
