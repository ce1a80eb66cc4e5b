#pragma once
// What every C++ peer runner shares, so that kiln, ONNX Runtime and OpenCV are measured by the same
// code: reading the model set's reference input (.npy) and tiling it over the batch, the command
// line, the warm-up and timing loop, the percentiles, and the one JSON line each runner prints.
// torch_runner.py implements the same protocol in Python (keep the two in step).
//
// Header-only and dependency-free on purpose: the ONNX Runtime runner must not link kiln, and the
// OpenCV runner only OpenCV.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace peers {

// The command line all runners take:
//   --model M --onnx PATH --input NPY --batch B --threads T
//   [--warmup-runs 10 --warmup-s 1 --iters 100 --budget-s 5 --min-iters 10]
struct Args {
  std::string model, onnx, input;
  int batch = 1, threads = 1;
  int warmup_runs = 10;      // warm up for this many runs ...
  double warmup_s = 1.0;     // ... or until this much time has passed, whichever comes first
  int iters = 100;           // time this many runs ...
  double budget_s = 5.0;     // ... or fewer if they would take longer than this,
  int min_iters = 10;        // but never fewer than this
  std::string calib;         // kiln only: build INT8 with this calibration file
  int int8_weight_bits = 8;  // kiln only: 7 for --int8WeightBits=7
};

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--model")
      a.model = v;
    else if (k == "--onnx")
      a.onnx = v;
    else if (k == "--input")
      a.input = v;
    else if (k == "--batch")
      a.batch = std::atoi(v.c_str());
    else if (k == "--threads")
      a.threads = std::atoi(v.c_str());
    else if (k == "--warmup-runs")
      a.warmup_runs = std::atoi(v.c_str());
    else if (k == "--warmup-s")
      a.warmup_s = std::atof(v.c_str());
    else if (k == "--iters")
      a.iters = std::atoi(v.c_str());
    else if (k == "--budget-s")
      a.budget_s = std::atof(v.c_str());
    else if (k == "--min-iters")
      a.min_iters = std::atoi(v.c_str());
    else if (k == "--calib")
      a.calib = v;
    else if (k == "--int8-weight-bits")
      a.int8_weight_bits = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  if (a.onnx.empty() || a.input.empty() || a.batch < 1 || a.threads < 1) {
    std::fprintf(stderr, "usage: %s --model M --onnx PATH --input NPY --batch B --threads T\n",
                 argv[0]);
    std::exit(2);
  }
  return a;
}

// A little-endian C-order .npy file: float32 ('<f4') or int64 ('<i8') only (all the model set
// uses).
struct Npy {
  std::string dtype;  // "float32" or "int64"
  std::vector<int64_t> shape;
  std::vector<char> bytes;
  size_t elem_size() const { return dtype == "int64" ? 8 : 4; }
};

[[noreturn]] inline void die(const std::string& msg) {
  std::fprintf(stderr, "error: %s\n", msg.c_str());
  std::exit(1);
}

inline Npy read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) die("cannot open " + path);
  char magic[8];
  f.read(magic, 8);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) die(path + " is not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    uint16_t n = 0;
    f.read(reinterpret_cast<char*>(&n), 2);
    header_len = n;
  } else {
    f.read(reinterpret_cast<char*>(&header_len), 4);
  }
  std::string header(header_len, '\0');
  f.read(header.data(), header_len);
  Npy out;
  if (header.find("'<f4'") != std::string::npos)
    out.dtype = "float32";
  else if (header.find("'<i8'") != std::string::npos)
    out.dtype = "int64";
  else
    die(path + ": only float32 and int64 .npy files are supported: " + header);
  if (header.find("'fortran_order': True") != std::string::npos) die(path + ": Fortran order");
  const size_t lp = header.find('(', header.find("'shape'"));
  const size_t rp = header.find(')', lp);
  std::stringstream dims(header.substr(lp + 1, rp - lp - 1));
  std::string tok;
  size_t n = 1;
  while (std::getline(dims, tok, ',')) {
    if (tok.find_first_not_of(' ') == std::string::npos) continue;
    out.shape.push_back(std::atoll(tok.c_str()));
    n *= static_cast<size_t>(out.shape.back());
  }
  out.bytes.resize(n * out.elem_size());
  f.read(out.bytes.data(), static_cast<std::streamsize>(out.bytes.size()));
  if (!f) die(path + " is truncated");
  return out;
}

// The reference input (batch 1) repeated `batch` times along the first axis.
inline Npy tile_batch(const Npy& one, int batch) {
  if (one.shape.empty() || one.shape[0] != 1) die("reference input must have batch 1");
  Npy out = one;
  out.shape[0] = batch;
  out.bytes.clear();
  for (int b = 0; b < batch; ++b)
    out.bytes.insert(out.bytes.end(), one.bytes.begin(), one.bytes.end());
  return out;
}

// Compares the first batch row of a float32 output with the model set's reference output
// (PyTorch's, <model>.output.npy next to the input) and returns the JSON fields for print_result: a
// runner that is fast because it computes something else must show here. "" when there is no
// reference.
inline std::string check_output(const Args& a, const float* out) {
  const std::string suffix = ".input.npy";
  if (a.input.size() <= suffix.size() ||
      a.input.compare(a.input.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return "";
  }
  const std::string path = a.input.substr(0, a.input.size() - suffix.size()) + ".output.npy";
  if (!std::ifstream(path)) return "";
  const Npy ref = read_npy(path);
  if (ref.dtype != "float32") return "";
  const float* r = reinterpret_cast<const float*>(ref.bytes.data());
  double err = 0, mag = 0;
  for (size_t i = 0; i < ref.bytes.size() / 4; ++i) {
    err = std::max(err, static_cast<double>(std::fabs(out[i] - r[i])));
    mag = std::max(mag, static_cast<double>(std::fabs(r[i])));
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "\"max_abs_err\": %.3g, \"ref_max_abs\": %.3g", err, mag);
  return buf;
}

struct Timing {
  int warmup_runs = 0;
  std::vector<double> ms;  // one per timed run
  double total_s = 0;      // wall time of the timed loop
};

// Warm-up, then the timed loop; each run is timed on its own with a monotonic clock.
inline Timing time_runs(const Args& a, const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  Timing t;
  const auto w0 = Clock::now();
  while (t.warmup_runs < a.warmup_runs && (t.warmup_runs < 1 || since(w0) < a.warmup_s)) {
    run();
    ++t.warmup_runs;
  }
  const auto t0 = Clock::now();
  for (int i = 0; i < a.iters; ++i) {
    if (i >= a.min_iters && since(t0) > a.budget_s) break;
    const auto r0 = Clock::now();
    run();
    t.ms.push_back(since(r0) * 1e3);
  }
  t.total_s = since(t0);
  return t;
}

// numpy's default (linear interpolation) percentile.
inline double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q / 100.0 * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

inline std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    o += c;
  }
  return o;
}

// The one line every runner prints on stdout (run.py parses the last line starting with '{').
inline void print_result(const std::string& engine, const Args& a, const Timing& t,
                         const std::string& version, const std::string& extra_json = "") {
  double sum = 0;
  for (double x : t.ms) sum += x;
  const double mean = sum / static_cast<double>(t.ms.size());
  std::printf(
      "{\"engine\": \"%s\", \"model\": \"%s\", \"batch\": %d, \"threads\": %d, \"p50_ms\": %.4f, "
      "\"p90_ms\": %.4f, \"p99_ms\": %.4f, \"mean_ms\": %.4f, \"min_ms\": %.4f, "
      "\"images_per_s\": %.3f, \"iters\": %zu, \"warmup_runs\": %d, \"version\": \"%s\"%s%s}\n",
      engine.c_str(), json_escape(a.model).c_str(), a.batch, a.threads, percentile(t.ms, 50),
      percentile(t.ms, 90), percentile(t.ms, 99), mean, *std::min_element(t.ms.begin(), t.ms.end()),
      a.batch * static_cast<double>(t.ms.size()) / t.total_s, t.ms.size(), t.warmup_runs,
      json_escape(version).c_str(), extra_json.empty() ? "" : ", ", extra_json.c_str());
  std::fflush(stdout);
}

}  // namespace peers
