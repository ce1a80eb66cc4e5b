// Calibration statistics, the three calibrators, and the calibration file formats.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "quant/calibration_file.h"
#include "quant/calibrator.h"
#include "quant/histogram.h"
#include "testing/onnx_builder.h"

namespace kiln::quant {
namespace {

std::vector<float> gaussian(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, sigma);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(AbsHistogram, CountsEveryFiniteValueAcrossRangeGrowth) {
  AbsHistogram h;
  h.add(std::vector<float>{0, 0.5f, -1.0f});
  EXPECT_EQ(h.range(), 1.0);
  h.add(std::vector<float>{3.0f, -0.25f, NAN, INFINITY});  // grows to 4 (two doublings)
  EXPECT_EQ(h.range(), 4.0);
  EXPECT_EQ(h.total(), 5u);
  EXPECT_EQ(h.non_finite(), 2u);
  EXPECT_EQ(h.min(), -1.0f);
  EXPECT_EQ(h.max(), 3.0f);
  EXPECT_EQ(h.amax(), 3.0f);
  uint64_t sum = 0;
  for (uint64_t c : h.counts()) sum += c;
  EXPECT_EQ(sum, 5u);
  // |-1| was the first range's top edge, so it went to the last bin (2047), which two doublings
  // merged down to bin 511.
  EXPECT_EQ(h.counts()[511], 1u);
  EXPECT_EQ(h.counts()[kHistogramBins - 1], 0u);
  EXPECT_EQ(h.counts()[1536], 1u);  // 3.0
}

TEST(AbsHistogram, AllZerosThenValues) {
  AbsHistogram h;
  h.add(std::vector<float>{0, 0, 0});
  EXPECT_EQ(h.range(), 0.0);
  h.add(std::vector<float>{2.0f});
  EXPECT_EQ(h.total(), 4u);
  EXPECT_EQ(h.counts()[0], 3u);
}

TEST(AbsHistogram, MergeEqualsAddingEverything) {
  const std::vector<float> a = gaussian(5000, 1.0f, 1), b = gaussian(5000, 3.0f, 2);
  AbsHistogram ha, hb, all;
  ha.add(a);
  hb.add(b);
  all.add(a);
  all.add(b);
  ha.merge(hb);
  EXPECT_EQ(ha.total(), all.total());
  EXPECT_EQ(ha.amax(), all.amax());
  EXPECT_EQ(ha.min(), all.min());
  EXPECT_NEAR(percentile_amax(ha, 99), percentile_amax(all, 99), 2 * all.bin_width());
}

TEST(Calibrator, MinMaxAndPercentile) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) / static_cast<float>(v.size());
  AbsHistogram h;
  h.add(v);
  EXPECT_FLOAT_EQ(choose_amax(h, {CalibrationAlgo::kMinMax}), h.amax());
  EXPECT_NEAR(choose_amax(h, {CalibrationAlgo::kPercentile, 90}), 0.9, 1e-3);
  EXPECT_NEAR(choose_amax(h, {CalibrationAlgo::kPercentile, 100}), h.amax(), 1e-3);
  AbsHistogram empty;
  EXPECT_EQ(choose_amax(empty, {CalibrationAlgo::kEntropy}), 0);
}

TEST(Calibrator, EntropyClipsRareOutliersButNotTheBulk) {
  std::vector<float> v = gaussian(200000, 1.0f, 3);
  v.push_back(40.0f);  // one outlier 40 sigma out
  AbsHistogram h;
  h.add(v);
  const double amax = entropy_amax(h);
  EXPECT_LT(amax, 0.5 * h.amax());  // the outlier does not set the scale
  EXPECT_GT(amax, 2.5);             // the Gaussian's bulk is kept
}

// After a ReLU: half the values are exact zeros, the rest a half-Gaussian. The zero spike must not
// decide the threshold, and a tensor >= 0 is judged against 256 levels: the bulk is kept.
TEST(Calibrator, EntropyOfAReluOutputKeepsItsBulk) {
  std::vector<float> v = gaussian(200000, 1.0f, 5);
  for (float& x : v) x = std::max(x, 0.0f);
  AbsHistogram h;
  h.add(v);
  ASSERT_EQ(h.min(), 0.0f);
  const double amax = entropy_amax(h);
  EXPECT_GT(amax, 3.0);  // about 99.9% of a half-Gaussian of sigma 1 lies below 3.3
  EXPECT_LE(amax, h.amax());
}

TEST(Calibrator, EntropyKeepsAUniformRange) {
  std::vector<float> v(100000);
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> d(-2, 2);
  for (float& x : v) x = d(rng);
  AbsHistogram h;
  h.add(v);
  EXPECT_GT(entropy_amax(h), 0.9 * h.amax());
}

TEST(Calibrator, AlgoNames) {
  EXPECT_EQ(*parse_calibration_algo("percentile"), CalibrationAlgo::kPercentile);
  auto bad = parse_calibration_algo("kl");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'kl'"), std::string::npos);
}

TEST(TrtCache, ScaleHexIsTensorRtsBitPattern) {
  EXPECT_EQ(trt_scale_hex(1.0f / 127.0f), "3c010204");  // amax 1.0, from ANCHORS.md 1.4
  EXPECT_EQ(trt_scale_hex(0.0f), "0");
  EXPECT_EQ(trt_scale_hex(5.745f).substr(0, 4), "40b7");
}

TEST(TrtCache, ParsesNamesWithColonsAndSpaces) {
  auto c = parse_trt_cache(
      "TRT-8601-EntropyCalibration2\n"
      "data_0: 3c010204\n"
      "(Unnamed Layer* 82) [Shuffle]_output: 3c56713e\n"
      "a:b: 0\n",
      "test cache");
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->origin, "TRT-8601-EntropyCalibration2");
  ASSERT_EQ(c->tensors.size(), 3u);
  EXPECT_NEAR(c->tensors.at("data_0").amax, 1.0, 1e-6);
  EXPECT_EQ(c->tensors.at("a:b").amax, 0.0);
  EXPECT_TRUE(c->tensors.count("(Unnamed Layer* 82) [Shuffle]_output"));
  EXPECT_FALSE(c->tensors.at("data_0").stats.has_value());
}

TEST(TrtCache, RoundTripsThroughText) {
  Calibration c;
  c.method.algo = CalibrationAlgo::kMinMax;
  c.tensors["x"] = {2.54, std::nullopt};
  c.tensors["conv out:0"] = {0.127, std::nullopt};
  const std::string text = trt_cache_text(c, 100300);
  EXPECT_EQ(text.substr(0, text.find('\n')), "TRT-100300-MinMaxCalibration");
  auto back = parse_trt_cache(text, "t");
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->method.algo, CalibrationAlgo::kMinMax);
  EXPECT_NEAR(back->tensors.at("x").amax, 2.54, 1e-5);
  EXPECT_NEAR(back->tensors.at("conv out:0").amax, 0.127, 1e-6);
}

TEST(TrtCache, MalformedLinesAreNamed) {
  for (const char* text :
       {"not a cache\n", "TRT-8601-EntropyCalibration2\nx 3c010204\n",
        "TRT-8601-EntropyCalibration2\nx: zz\n", "TRT-8601-EntropyCalibration2\nx: \n",
        "TRT-8601-EntropyCalibration2\nx: 7fc00000\n"}) {
    auto c = parse_trt_cache(text, "cache.txt");
    ASSERT_FALSE(c.is_ok()) << text;
    EXPECT_NE(c.status().message().find("cache.txt"), std::string::npos) << c.status().message();
  }
}

TEST(CalibrationFile, RoundTripKeepsStatsAndMethod) {
  testing::TempDir dir;
  Calibration c;
  c.method = {CalibrationAlgo::kPercentile, 99.9};
  c.model_hash = content_hash("model");
  c.data_hash = content_hash("data");
  c.samples = 12;
  AbsHistogram h;
  h.add(gaussian(1000, 2.0f, 5));
  c.tensors["t"] = {choose_amax(h, c.method), h};
  c.tensors["imported"] = {1.5, std::nullopt};
  const auto path = dir.path() / "m.calib";
  ASSERT_TRUE(write_calibration(c, path).is_ok());
  auto back = read_calibration(path);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->method.algo, CalibrationAlgo::kPercentile);
  EXPECT_EQ(back->method.percentile, 99.9);
  EXPECT_EQ(back->model_hash, c.model_hash);
  EXPECT_EQ(back->samples, 12);
  const TensorCalibration& t = back->tensors.at("t");
  EXPECT_EQ(t.amax, c.tensors["t"].amax);
  ASSERT_TRUE(t.stats.has_value());
  EXPECT_EQ(t.stats->counts(), h.counts());
  EXPECT_EQ(t.stats->range(), h.range());
  EXPECT_EQ(t.stats->min(), h.min());
  // Re-deriving an amax from the stored histogram gives the same answer as from the live one.
  EXPECT_EQ(choose_amax(*t.stats, {CalibrationAlgo::kEntropy}),
            choose_amax(h, {CalibrationAlgo::kEntropy}));
  EXPECT_FALSE(back->tensors.at("imported").stats.has_value());
}

TEST(CalibrationFile, BadFilesAreErrorsNamingThePath) {
  testing::TempDir dir;
  const auto path = dir.path() / "bad.calib";
  for (const char* text :
       {"{", "{\"format\": \"other\"}", "{\"format\": \"kiln-calibration\", \"version\": 2}",
        "{\"format\": \"kiln-calibration\", \"version\": 1}",
        "{\"format\": \"kiln-calibration\", \"version\": 1, \"method\": {\"algo\": \"entropy\"}, "
        "\"model_hash\": \"\", \"data_hash\": \"\", \"samples\": 1, "
        "\"tensors\": {\"t\": {\"amax\": -1}}}"}) {
    std::ofstream(path) << text;
    auto r = read_calibration(path);
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_NE(r.status().message().find("bad.calib"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(read_calibration(dir.path() / "missing").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace kiln::quant
