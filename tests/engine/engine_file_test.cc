// The engine file container: exact byte layout, round trips through memory and disk, alignment of
// section data, writer validation and atomic writes.

#include "engine/engine_file.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>

#include "engine/engine_file_test_util.h"
#include "io/io_test_util.h"

namespace kiln::engine {
namespace {

using io::testing::ScratchDir;
using testing::get_le;
using testing::parse;
using testing::random_text;
using testing::spec_checksum;

std::string text_of(std::span<const std::byte> s) {
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

// meta (13 bytes), weights (1000 bytes), empty (0 bytes), page (5 bytes, 4096-aligned).
EngineFileWriter sample_writer() {
  EngineFileWriter w;
  w.set_required_features(CpuFeature::kSse4_2 | CpuFeature::kAvx512f);
  EXPECT_TRUE(w.add_section("meta", std::string(R"({"layers":[]})")).is_ok());
  EXPECT_TRUE(w.add_section("weights", random_text(1000, 7)).is_ok());
  EXPECT_TRUE(w.add_section("empty", std::string()).is_ok());
  EXPECT_TRUE(w.add_section("page", std::string("12345"), 4096).is_ok());
  return w;
}

TEST(EngineFile, ByteLayoutFollowsTheSpec) {
  EngineFileWriter w;
  w.set_required_features(uint64_t{0x0123456789abcdef});
  ASSERT_TRUE(w.add_section("meta", std::string("abc")).is_ok());
  const std::string f = w.to_bytes();
  // Header 128 + one 48-byte entry = 176, padded to 192 for the section; 3 bytes of data.
  ASSERT_EQ(f.size(), 195u);
  EXPECT_EQ(f.substr(0, 8), "KILNPLAN");
  EXPECT_EQ(get_le(f, 8, 4), 4u);     // format version
  EXPECT_EQ(get_le(f, 12, 4), 128u);  // header size
  EXPECT_EQ(get_le(f, 16, 8), 195u);  // file size
  EXPECT_EQ(get_le(f, 24, 8), 0x0123456789abcdefu);
  EXPECT_EQ(get_le(f, 32, 8), 128u);  // section table offset
  EXPECT_EQ(get_le(f, 40, 4), 1u);    // section count
  EXPECT_EQ(get_le(f, 44, 4), 48u);   // entry size
  EXPECT_EQ(get_le(f, 48, 4), spec_checksum(f));
  EXPECT_EQ(get_le(f, 52, 4), 0u);
  const std::string version = current_kiln_version();
  EXPECT_EQ(f.substr(56, version.size()), version);
  EXPECT_EQ(f.substr(56 + version.size(), 128 - 56 - version.size()),
            std::string(128 - 56 - version.size(), '\0'));
  EXPECT_EQ(f.substr(128, 16), std::string("meta") + std::string(12, '\0'));
  EXPECT_EQ(get_le(f, 144, 8), 192u);  // offset
  EXPECT_EQ(get_le(f, 152, 8), 3u);    // size
  EXPECT_EQ(get_le(f, 160, 4), 64u);   // alignment
  EXPECT_EQ(f.substr(164, 12), std::string(12, '\0'));
  EXPECT_EQ(f.substr(176, 16), std::string(16, '\0'));  // padding
  EXPECT_EQ(f.substr(192), "abc");
}

TEST(EngineFile, EmptyEngineIsJustTheHeader) {
  const std::string f = EngineFileWriter().to_bytes();
  ASSERT_EQ(f.size(), 128u);
  Result<EngineFile> e = parse(f);
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_TRUE(e->sections().empty());
  EXPECT_EQ(e->section("meta"), std::nullopt);
}

TEST(EngineFile, RoundTripInMemory) {
  const std::string f = sample_writer().to_bytes();
  // meta at 320 (after 4 entries), weights at 384, empty at 1408, page at 4096.
  ASSERT_EQ(f.size(), 4101u);
  Result<EngineFile> e = parse(f, {.check_cpu = false});
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->format_version(), kEngineFormatVersion);
  EXPECT_EQ(e->kiln_version(), current_kiln_version());
  EXPECT_EQ(e->required_features(), CpuFeature::kSse4_2 | CpuFeature::kAvx512f);
  EXPECT_EQ(e->file_size(), 4101u);
  EXPECT_EQ(e->checksum(), spec_checksum(f));
  EXPECT_EQ(e->source(), "test.plan");
  ASSERT_EQ(e->sections().size(), 4u);
  const uint64_t offsets[] = {320, 384, 1408, 4096};
  const uint64_t sizes[] = {13, 1000, 0, 5};
  const char* names[] = {"meta", "weights", "empty", "page"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(e->sections()[i].name, names[i]);
    EXPECT_EQ(e->sections()[i].offset, offsets[i]) << names[i];
    EXPECT_EQ(e->sections()[i].size, sizes[i]) << names[i];
  }
  EXPECT_EQ(text_of(*e->section("meta")), R"({"layers":[]})");
  EXPECT_EQ(text_of(*e->section("weights")), random_text(1000, 7));
  EXPECT_EQ(e->section("empty")->size(), 0u);
  EXPECT_EQ(text_of(*e->section("page")), "12345");
  EXPECT_EQ(e->section("missing"), std::nullopt);
  EXPECT_EQ(e->section("Meta"), std::nullopt);
  // The std::string's buffer is not 4096-aligned, so the parser copied it into aligned memory.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e->section("weights")->data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e->section("page")->data()) % 4096, 0u);
}

TEST(EngineFile, MisalignedBufferIsCopiedAligned) {
  const std::string f = sample_writer().to_bytes();
  auto buffer = std::make_shared<std::string>(f.size() + 64, '\0');
  size_t shift = 1;
  while ((reinterpret_cast<uintptr_t>(buffer->data()) + shift) % 64 == 0) ++shift;
  buffer->replace(shift, f.size(), f);
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(buffer->data()) + shift,
                                         f.size());
  Result<EngineFile> e = parse_engine_file(bytes, buffer, "shifted", {.check_cpu = false});
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  for (const SectionInfo& s : e->sections()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(e->section(s.name)->data()) % s.alignment, 0u) << s.name;
  }
  EXPECT_EQ(text_of(*e->section("weights")), random_text(1000, 7));
  EXPECT_NE(e->owner(), buffer) << "the result owns its aligned copy";
}

TEST(EngineFile, RoundTripThroughAMappedFile) {
  ScratchDir dir;
  const EngineFileWriter w = sample_writer();
  ASSERT_TRUE(w.write(dir / "model.plan").is_ok());
  EXPECT_EQ(io::testing::read_bytes(dir / "model.plan"), w.to_bytes());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.plan"});
  std::shared_ptr<const void> owner;
  const std::byte* weights = nullptr;
  {
    Result<EngineFile> e = read_engine_file(dir / "model.plan", {.check_cpu = false});
    ASSERT_TRUE(e.is_ok()) << e.status().to_string();
    EXPECT_EQ(e->source(), (dir / "model.plan").string());
    for (const SectionInfo& s : e->sections()) {
      const auto data = reinterpret_cast<uintptr_t>(e->section(s.name)->data());
      EXPECT_EQ(data % 64, 0u) << s.name;
      EXPECT_EQ(data % s.alignment, 0u) << s.name;
    }
    owner = e->owner();
    weights = e->section("weights")->data();
  }
  // The owner alone keeps the mapping alive, as borrowed weight tensors need.
  std::filesystem::remove(dir / "model.plan");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(weights), 1000), random_text(1000, 7));
}

TEST(EngineFile, SpanOverloadCopiesNothing) {
  const std::string f = sample_writer().to_bytes();
  const auto aligned = std::shared_ptr<std::byte>(
      static_cast<std::byte*>(::operator new (f.size(), std::align_val_t{4096})),
      [](std::byte* p) { ::operator delete (p, std::align_val_t{4096}); });
  std::memcpy(aligned.get(), f.data(), f.size());
  Result<EngineFile> e =
      parse_engine_file({aligned.get(), f.size()}, aligned, "aligned", {.check_cpu = false});
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->section("weights")->data(), aligned.get() + 384);
  EXPECT_EQ(e->owner(), aligned);
}

TEST(EngineFileWriter, RejectsBadSections) {
  EngineFileWriter w;
  const auto expect_rejected = [&w](std::string name, uint32_t alignment,
                                    std::string_view fragment) {
    const Status s = w.add_section(name, std::string("x"), alignment);
    ASSERT_FALSE(s.is_ok()) << name;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
  };
  expect_rejected("", 64, "1 to 16 characters");
  expect_rejected("seventeen_chars_x", 64, "'seventeen_chars_x'");
  expect_rejected("a b", 64, "0x20");
  expect_rejected("w\xc3\xa9ights", 64, "0xc3");
  expect_rejected(std::string("a\0b", 3), 64, "0x00");
  expect_rejected("meta", 32, "alignment 32");
  expect_rejected("meta", 96, "alignment 96");
  expect_rejected("meta", 8192, "alignment 8192");
  ASSERT_TRUE(w.add_section("sixteen_chars_ok", std::string("x")).is_ok());
  ASSERT_TRUE(w.add_section("meta", std::string("x")).is_ok());
  expect_rejected("meta", 64, "'meta' is added twice");
}

TEST(EngineFileWriter, WriteIntoAMissingFolderFailsCleanly) {
  ScratchDir dir;
  const Status s = sample_writer().write(dir / "no_such_dir" / "model.plan");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("model.plan"), std::string::npos) << s.message();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(EngineFileWriter, OverwriteReplacesTheOldFile) {
  ScratchDir dir;
  ASSERT_TRUE(EngineFileWriter().write(dir / "m.plan").is_ok());
  const EngineFileWriter w = sample_writer();
  ASSERT_TRUE(w.write(dir / "m.plan").is_ok());
  EXPECT_EQ(io::testing::read_bytes(dir / "m.plan"), w.to_bytes());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.plan"});
}

// A write that runs out of space (here: the file size limit) leaves the previous engine as it was
// and no temporary file behind.
TEST(EngineFileWriter, FailedOverwriteKeepsTheOldFile) {
  ScratchDir dir;
  const EngineFileWriter old_writer = sample_writer();
  ASSERT_TRUE(old_writer.write(dir / "m.plan").is_ok());
  EngineFileWriter big;
  ASSERT_TRUE(big.add_section("weights", random_text(1 << 20, 9)).is_ok());

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);  // get EFBIG instead of being killed
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const Status s = big.write(dir / "m.plan");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("m.plan"), std::string::npos) << s.message();
  EXPECT_EQ(io::testing::read_bytes(dir / "m.plan"), old_writer.to_bytes());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.plan"});
}

TEST(EngineFileWriter, TargetThatIsAFolderIsLeftAlone) {
  ScratchDir dir;
  std::filesystem::create_directory(dir / "m.plan");
  const Status s = sample_writer().write(dir / "m.plan");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_TRUE(std::filesystem::is_directory(dir / "m.plan"));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.plan"});
}

}  // namespace
}  // namespace kiln::engine
