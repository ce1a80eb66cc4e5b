// Damaged, foreign and hostile engine files: each gives its own Status and message, never a crash
// or a read outside the bytes (run under ASan in CI).

#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/engine_file.h"
#include "engine/engine_file_test_util.h"
#include "io/io_test_util.h"
#include "testing/onnx_builder.h"

namespace kiln::engine {
namespace {

using io::testing::ScratchDir;
using io::testing::write_bytes;
using testing::expect_error;
using testing::get_le;
using testing::parse;
using testing::put_le;
using testing::random_text;
using testing::reseal;

constexpr ReadOptions kNoCpuCheck{.check_cpu = false};

// The table holds three entries at 128, 176 and 224 (it ends at 272); then meta (20 bytes at 320),
// weights (3000 bytes at 384) and tail (7 bytes at 3392): 3399 bytes in all.
std::string sample() {
  EngineFileWriter w;
  EXPECT_TRUE(w.add_section("meta", std::string(R"({"layers":["conv1"]})")).is_ok());
  EXPECT_TRUE(w.add_section("weights", random_text(3000, 5)).is_ok());
  EXPECT_TRUE(w.add_section("tail", std::string("7 bytes")).is_ok());
  std::string f = w.to_bytes();
  EXPECT_EQ(f.size(), 3399u);
  return f;
}

constexpr size_t kEntry0 = 128, kEntry1 = 176, kEntry2 = 224;

TEST(EngineFileErrors, SampleLoads) {
  Result<EngineFile> e = parse(sample());
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->sections().size(), 3u);
}

TEST(EngineFileErrors, EveryTruncationIsCorrupt) {
  const std::string f = sample();
  for (size_t cut = 0; cut < f.size(); ++cut) {
    SCOPED_TRACE(cut);
    const Result<EngineFile> e = parse(f.substr(0, cut), kNoCpuCheck);
    if (cut == 0) {
      expect_error(e, StatusCode::kCorrupt, "is empty (0 bytes)");
    } else if (cut < 24) {
      expect_error(e, StatusCode::kCorrupt, "less than the 128-byte header");
    } else {
      expect_error(e, StatusCode::kCorrupt,
                   fmt::format("truncated: expected 3399 bytes, file has {}", cut));
    }
  }
}

TEST(EngineFileErrors, TrailingBytesAreCorrupt) {
  expect_error(parse(sample() + "x"), StatusCode::kCorrupt,
               "the header says the file has 3399 bytes, but it has 3400");
}

TEST(EngineFileErrors, EveryFlippedByteIsCorrupt) {
  const std::string f = sample();
  std::mt19937 rng(11);
  for (size_t i = 0; i < f.size(); ++i) {
    std::string damaged = f;
    const int flip = 1 + static_cast<int>(rng() % 255);
    damaged[i] = static_cast<char>(damaged[i] ^ flip);
    SCOPED_TRACE(fmt::format("byte {} ^ 0x{:02x}", i, flip));
    expect_error(parse(std::move(damaged), kNoCpuCheck), StatusCode::kCorrupt, "");
  }
  std::string damaged = f;
  damaged[1000] ^= 0x10;
  expect_error(parse(damaged), StatusCode::kCorrupt, "checksum mismatch");
  damaged = f;
  damaged[3] = 'X';
  expect_error(parse(damaged), StatusCode::kCorrupt, "magic is damaged");
}

TEST(EngineFileErrors, OtherFormatVersionIsUnsupported) {
  for (uint32_t version : {0u, 1u, 2u, 3u, 5u, 77u}) {
    std::string f = sample();
    put_le(f, 8, version, 4);
    reseal(f);
    const Result<EngineFile> e = parse(f);
    expect_error(e, StatusCode::kUnsupported, fmt::format("format version {}", version));
    expect_error(e, StatusCode::kUnsupported, "reads format version 4");
    expect_error(e, StatusCode::kUnsupported, "built by kiln " + current_kiln_version());
  }
}

// Structural damage that a correct checksum does not excuse (a buggy or hostile writer).
std::string resealed(std::string f) {
  reseal(f);
  return f;
}

TEST(EngineFileErrors, BadHeaderFields) {
  std::string f = sample();
  put_le(f, 12, 64, 4);
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "header size 64");
  f = sample();
  put_le(f, 44, 40, 4);
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "entries of 40 bytes");
  f = sample();
  f[52] = 1;
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "reserved header bytes");
  f = sample();
  f[127] = 1;
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "reserved header bytes");
  f = sample();
  f[57] = '\x01';
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "the kiln version has the byte 0x01");
  f = sample();
  f[100] = 'x';  // after the version's NUL padding began
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "the kiln version is not NUL-padded");
}

TEST(EngineFileErrors, SectionTableOutOfBounds) {
  const auto with = [](size_t at, uint64_t v, size_t width) {
    std::string f = sample();
    put_le(f, at, v, width);
    return resealed(f);
  };
  expect_error(parse(with(32, 3399, 8)), StatusCode::kCorrupt, "the section table (3 entries");
  expect_error(parse(with(32, 0, 8)), StatusCode::kCorrupt, "at offset 0");  // inside the header
  expect_error(parse(with(32, 130, 8)), StatusCode::kCorrupt, "at offset 130");  // misaligned
  expect_error(parse(with(32, ~uint64_t{0} - 7, 8)), StatusCode::kCorrupt, "section table");
  expect_error(parse(with(40, 0xffffffffu, 4)), StatusCode::kCorrupt, "4294967295 entries");
}

TEST(EngineFileErrors, SectionEntriesOutOfBounds) {
  const auto with = [](size_t at, uint64_t v, size_t width) {
    std::string f = sample();
    put_le(f, at, v, width);
    return resealed(f);
  };
  // weights: offset at kEntry1 + 16, size at + 24, alignment at + 32.
  expect_error(parse(with(kEntry1 + 24, 3016, 8)), StatusCode::kCorrupt,
               "section 'weights' (3016 bytes at offset 384) extends past the end");
  expect_error(parse(with(kEntry1 + 16, 3392, 8)), StatusCode::kCorrupt, "extends past the end");
  expect_error(parse(with(kEntry1 + 16, ~uint64_t{0} - 63, 8)), StatusCode::kCorrupt,
               "extends past the end");
  // offset + size wraps around 2^64 to a small number.
  expect_error(parse(with(kEntry1 + 24, ~uint64_t{0} - 63, 8)), StatusCode::kCorrupt,
               "extends past the end");
  expect_error(parse(with(kEntry1 + 16, 385, 8)), StatusCode::kCorrupt,
               "offset 385 is not a multiple of its alignment 64");
  expect_error(parse(with(kEntry1 + 32, 0, 4)), StatusCode::kCorrupt, "alignment 0");
  expect_error(parse(with(kEntry1 + 32, 32, 4)), StatusCode::kCorrupt, "alignment 32");
  expect_error(parse(with(kEntry1 + 32, 80, 4)), StatusCode::kCorrupt, "alignment 80");
  expect_error(parse(with(kEntry1 + 32, 8192, 4)), StatusCode::kCorrupt, "alignment 8192");
  expect_error(parse(with(kEntry1 + 40, 1, 8)), StatusCode::kCorrupt,
               "section 'weights': reserved bytes");
}

TEST(EngineFileErrors, BadSectionNames) {
  const auto named = [](std::string_view name16) {
    std::string f = sample();
    f.replace(kEntry2, 16, name16);
    return resealed(f);
  };
  expect_error(parse(named(std::string(16, '\0'))), StatusCode::kCorrupt,
               "section table entry 2: section name '' must have 1 to 16 characters");
  expect_error(parse(named(std::string("ta l") + std::string(12, '\0'))), StatusCode::kCorrupt,
               "section table entry 2: section name 'ta l' has the character 0x20");
  expect_error(parse(named(std::string("ta\0l", 4) + std::string(12, '\0'))), StatusCode::kCorrupt,
               "section table entry 2: the name is not NUL-padded");
  expect_error(parse(named(std::string("ta\x80l", 4) + std::string(12, '\0'))),
               StatusCode::kCorrupt, "the name has the byte 0x80");
  expect_error(parse(named(std::string("meta") + std::string(12, '\0'))), StatusCode::kCorrupt,
               "section 'meta' appears twice");
  // Sixteen characters with no terminator is a valid name.
  Result<EngineFile> e = parse(named("abcdefghijklmnop"));
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->section("abcdefghijklmnop")->size(), 7u);
}

TEST(EngineFileErrors, OverlappingSections) {
  std::string f = sample();
  put_le(f, kEntry2 + 16, 3328, 8);  // tail inside weights [384, 3384)
  expect_error(parse(resealed(f)), StatusCode::kCorrupt,
               "section 'tail' (bytes 3328..3335) overlaps section 'weights' (bytes 384..3384)");
  f = sample();
  put_le(f, kEntry0 + 16, 192, 8);  // meta over the section table [128, 272)
  expect_error(parse(resealed(f)), StatusCode::kCorrupt,
               "section 'meta' (bytes 192..212) overlaps the section table (bytes 128..272)");
  f = sample();
  put_le(f, kEntry0 + 16, 0, 8);
  expect_error(parse(resealed(f)), StatusCode::kCorrupt,
               "section 'meta' (bytes 0..20) overlaps the header (bytes 0..128)");
  // An empty section overlaps nothing, wherever it is.
  f = sample();
  put_le(f, kEntry2 + 16, 64, 8);
  put_le(f, kEntry2 + 24, 0, 8);
  EXPECT_TRUE(parse(resealed(f)).is_ok());
}

// A writer never makes such a table, but a hostile file may: 100k empty sections must load in
// linear-ish time (a quadratic duplicate check would take minutes), and a repeated name at the end
// must still be found.
TEST(EngineFileErrors, HugeSectionTable) {
  constexpr size_t kCount = 100000;
  std::string f = EngineFileWriter().to_bytes();
  f.resize(kEngineHeaderSize + kCount * kSectionEntrySize, '\0');
  put_le(f, 16, f.size(), 8);
  put_le(f, 40, kCount, 4);
  for (size_t i = 0; i < kCount; ++i) {
    const size_t at = kEngineHeaderSize + i * kSectionEntrySize;
    const std::string name = fmt::format("s{}", i);
    f.replace(at, name.size(), name);
    put_le(f, at + 32, 64, 4);  // alignment; offset and size stay 0
  }
  Result<EngineFile> e = parse(resealed(f));
  ASSERT_TRUE(e.is_ok()) << e.status().to_string();
  EXPECT_EQ(e->sections().size(), kCount);
  f.replace(kEngineHeaderSize + (kCount - 1) * kSectionEntrySize, 6, std::string("s7\0\0\0\0", 6));
  expect_error(parse(resealed(f)), StatusCode::kCorrupt, "section 's7' appears twice");
}

std::string needing(CpuFeatureSet features) {
  EngineFileWriter w;
  w.set_required_features(features);
  EXPECT_TRUE(w.add_section("meta", std::string("{}")).is_ok());
  return w.to_bytes();
}

TEST(EngineFileErrors, CpuFeaturesHiddenOrMissing) {
  // Whatever this machine is, the sse4_2 cap leaves no AVX-512.
  const std::string f = needing(CpuFeature::kAvx512f | CpuFeature::kAvx512Vnni);
  const Result<EngineFile> e = parse(f, {.isa_cap = "sse4_2"});
  expect_error(e, StatusCode::kUnsupported, "needs the CPU features avx512f, avx512_vnni");
  const CpuFeatureSet detected = detected_cpu_features();
  if (has_feature(detected, CpuFeature::kAvx512f) &&
      has_feature(detected, CpuFeature::kAvx512Vnni)) {
    expect_error(e, StatusCode::kUnsupported, "the ISA cap 'sse4_2' hides avx512f, avx512_vnni");
    EXPECT_TRUE(parse(f, {.isa_cap = "avx512_vnni"}).is_ok());
  } else if (!has_feature(detected, CpuFeature::kAvx512f)) {
    expect_error(e, StatusCode::kUnsupported,
                 "this CPU (" + cpu_brand_string() + ") lacks avx512f");
  }
  EXPECT_TRUE(parse(f, kNoCpuCheck).is_ok());
}

TEST(EngineFileErrors, CpuCheckHonoursKilnMaxIsa) {
  const std::string f = needing(CpuFeature::kAvx2 | CpuFeature::kFma);
  const char* old = std::getenv(kMaxIsaEnv);
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  ::setenv(kMaxIsaEnv, "sse4_2", 1);
  const Result<EngineFile> capped = parse(f);
  ::setenv(kMaxIsaEnv, "sse9", 1);
  const Result<EngineFile> bad_cap = parse(f);
  if (saved) {
    ::setenv(kMaxIsaEnv, saved->c_str(), 1);
  } else {
    ::unsetenv(kMaxIsaEnv);
  }
  expect_error(capped, StatusCode::kUnsupported, "needs the CPU features avx2, fma");
  if (has_feature(detected_cpu_features(), CpuFeature::kAvx2)) {
    expect_error(capped, StatusCode::kUnsupported, "KILN_MAX_ISA=sse4_2 hides avx2");
  }
  expect_error(bad_cap, StatusCode::kInvalidArgument, "KILN_MAX_ISA=sse9: unknown ISA cap 'sse9'");
  expect_error(parse(f, {.isa_cap = "avx3"}), StatusCode::kInvalidArgument,
               "unknown ISA cap 'avx3'");
}

TEST(EngineFileErrors, FeatureBitsFromANewerKilnAreMissing) {
  const std::string f = needing(to_set(CpuFeature::kSse4_2) | (uint64_t{1} << 47));
  const Result<EngineFile> e = parse(f);
  expect_error(e, StatusCode::kUnsupported, "bit47 is unknown to this kiln");
  expect_error(e, StatusCode::kUnsupported, "built by kiln " + current_kiln_version());
  EXPECT_EQ(e.status().message().find("lacks sse4_2"), std::string::npos) << e.status().message();
  // kiln inspect can still read it.
  Result<EngineFile> inspected = parse(f, kNoCpuCheck);
  ASSERT_TRUE(inspected.is_ok()) << inspected.status().to_string();
  EXPECT_EQ(inspected->required_features(), to_set(CpuFeature::kSse4_2) | (uint64_t{1} << 47));
}

TEST(EngineFileErrors, NotAnEngine) {
  expect_error(parse(random_text(5000, 3)), StatusCode::kInvalidArgument,
               "'test.plan' is not a kiln engine (it does not start with \"KILNPLAN\")");
  expect_error(parse("hello world, this is text\n"), StatusCode::kInvalidArgument,
               "is not a kiln engine");
  expect_error(parse("KILN"), StatusCode::kCorrupt, "less than the 128-byte header");
  expect_error(parse("KIXX"), StatusCode::kInvalidArgument, "is not a kiln engine");
  const std::string onnx =
      kiln::testing::OnnxBuilder().input("x", onnx::TensorProto::FLOAT, {1, 2}).output("y").bytes();
  expect_error(parse(onnx), StatusCode::kInvalidArgument,
               "it looks like an ONNX model; build an engine from it with `kiln build`");
}

TEST(EngineFileErrors, ReadFileErrorsNameThePath) {
  ScratchDir dir;
  const auto read = [&](const char* name) { return read_engine_file(dir / name); };
  const std::string p = dir.path().string();
  expect_error(read("missing.plan"), StatusCode::kNotFound, "no such file", p + "/missing.plan");
  write_bytes(dir / "empty.plan", "");
  expect_error(read("empty.plan"), StatusCode::kCorrupt, "is empty (0 bytes)", p + "/empty.plan");
  kiln::testing::OnnxBuilder builder;
  builder.input("x", onnx::TensorProto::FLOAT, {1}).output("y");
  builder.node("Identity", {"x"}, {"y"});
  builder.write(dir.path(), "model.onnx");
  expect_error(read("model.onnx"), StatusCode::kInvalidArgument, "it looks like an ONNX model",
               p + "/model.onnx");
  std::filesystem::create_directory(dir / "folder.plan");
  expect_error(read("folder.plan"), StatusCode::kInvalidArgument, "is a directory",
               p + "/folder.plan");
  std::string damaged = sample();
  damaged[2000] ^= 4;
  write_bytes(dir / "damaged.plan", damaged);
  expect_error(read("damaged.plan"), StatusCode::kCorrupt, "checksum mismatch",
               p + "/damaged.plan");
}

}  // namespace
}  // namespace kiln::engine
