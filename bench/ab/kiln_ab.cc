// Interleaved A/B timing of kiln engines in one process, for decisions of a few percent on a noisy
// host: separate `kiln exec` runs of two engines can differ by 2x when the host's second core
// comes and goes, but runs alternated every few inferences see the same host. Each round times
// `--runs` executions of every engine in turn (the order alternating per round) and keeps each
// engine's median; the result is the median over rounds of B's round median over A's, with the
// quartiles of those ratios as the spread. A benchmark tool, never a test.
//
//   kiln_ab A.plan B.plan [--threads 2] [--rounds 30] [--runs 15] [--env-b VAR=VALUE]
//           [--evict-b MB]
//
// --env-b sets an environment variable after A's execution context is created and before B's:
// the same engine file twice then compares a plan-time switch (read when a context is created).
// --evict-b reads MB megabytes of other memory before each of B's runs (untimed), so that B runs
// with its weights and activations out of the caches: the same engine twice then shows what the
// caches are worth to it (a layer that writes tensors larger than L2 pays, in the network, for
// reading each line from memory before writing it).

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "peers/runner_common.h"

namespace {

using peers::die;

template <typename T>
T check(kiln::Result<T> r, const std::string& what) {
  if (!r.is_ok()) die(fmt::format("{}: {}", what, r.status().to_string()));
  return std::move(r).value();
}

void check(const kiln::Status& s, const std::string& what) {
  if (!s.is_ok()) die(fmt::format("{}: {}", what, s.to_string()));
}

struct Options {
  std::vector<std::string> engines;
  int threads = 2, rounds = 30, runs = 15;
  std::string env_b;
  int evict_b_mb = 0;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--threads")
      o.threads = std::atoi(value().c_str());
    else if (a == "--rounds")
      o.rounds = std::atoi(value().c_str());
    else if (a == "--runs")
      o.runs = std::atoi(value().c_str());
    else if (a == "--env-b")
      o.env_b = value();
    else if (a == "--evict-b")
      o.evict_b_mb = std::atoi(value().c_str());
    else if (a.starts_with("--"))
      die("unknown option " + a);
    else
      o.engines.push_back(a);
  }
  if (o.engines.size() != 2 || o.threads < 1 || o.rounds < 1 || o.runs < 1 || o.evict_b_mb < 0)
    die("usage: kiln_ab A.plan B.plan [--threads N] [--rounds R] [--runs N] [--env-b VAR=VALUE] "
        "[--evict-b MB]");
  if (!o.env_b.empty() && o.env_b.find('=') == std::string::npos)
    die("--env-b wants VAR=VALUE, got " + o.env_b);
  return o;
}

// An engine with a context whose inputs (at the first profile's opt shape) hold random values
// (float32) or zeros (other dtypes: valid indices and token ids, as a BERT's inputs need), and
// whose outputs are bound to buffers of their own.
struct Runner {
  kiln::Engine engine;
  kiln::ExecutionContext ctx;
  std::vector<std::vector<float>> buffers;
  // Read before each run (untimed) to push the engine's memory out of the caches; empty: none.
  std::vector<char> evict;
};

Runner make_runner(const std::string& path, int threads) {
  kiln::Engine engine = check(kiln::Runtime::load(path), "load " + path);
  kiln::ExecutionContext ctx = check(engine.create_execution_context(threads), "context");
  std::vector<std::vector<float>> buffers;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (const kiln::TensorInfo& t : engine.io_tensors()) {
    if (!t.is_input) continue;
    if (auto range = engine.profile_shape(0, t.name); range.is_ok())
      check(ctx.set_input_shape(t.name, range.value().opt), "shape of " + t.name);
  }
  for (const kiln::TensorInfo& t : engine.io_tensors()) {
    const kiln::Dims dims = check(ctx.tensor_shape(t.name), "shape of " + t.name);
    // 8 bytes an element bounds every dtype an engine's inputs and outputs take.
    buffers.emplace_back(static_cast<size_t>(kiln::dims_numel(dims)) * 2 + 16);
    if (t.is_input && t.dtype == kiln::DType::kF32) {
      for (float& v : buffers.back()) v = uniform(rng);
    }
    check(ctx.set_tensor_address(t.name, buffers.back().data()), "bind " + t.name);
  }
  return {std::move(engine), std::move(ctx), std::move(buffers)};
}

double median(std::vector<double> v) { return peers::percentile(std::move(v), 50); }

// Reads one byte a cache line of `mem`: reads, so that the lines it brings in are clean and
// their eviction writes nothing back during the timed run.
void walk(const std::vector<char>& mem) {
  unsigned sum = 0;
  for (size_t i = 0; i < mem.size(); i += 64) sum += static_cast<unsigned char>(mem[i]);
  volatile unsigned sink = sum;
  (void)sink;
}

// The median time of `runs` executions, in ms.
double time_round(Runner& r, int runs) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    if (!r.evict.empty()) walk(r.evict);
    const auto t0 = std::chrono::steady_clock::now();
    check(r.ctx.execute(), "execute");
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  kiln::use_kiln_openmp_wait(argv);
  const Options o = parse(argc, argv);
  Runner a = make_runner(o.engines[0], o.threads);
  if (!o.env_b.empty()) {
    const size_t eq = o.env_b.find('=');
    setenv(o.env_b.substr(0, eq).c_str(), o.env_b.substr(eq + 1).c_str(), 1);
  }
  Runner b = make_runner(o.engines[1], o.threads);
  // Written once, so that its pages are real memory (untouched ones would all read the zero page).
  b.evict.assign(static_cast<size_t>(o.evict_b_mb) << 20, 1);
  for (int i = 0; i < 3; ++i) time_round(a, o.runs), time_round(b, o.runs);
  std::vector<double> ma, mb, ratio;
  for (int round = 0; round < o.rounds; ++round) {
    const bool a_first = round % 2 == 0;
    const double first = time_round(a_first ? a : b, o.runs);
    const double second = time_round(a_first ? b : a, o.runs);
    ma.push_back(a_first ? first : second);
    mb.push_back(a_first ? second : first);
    ratio.push_back(mb.back() / ma.back());
  }
  fmt::print("A {}: median of round medians {:.4f} ms (best round {:.4f})\n", o.engines[0],
             median(ma), *std::min_element(ma.begin(), ma.end()));
  const std::string evicted =
      o.evict_b_mb > 0 ? fmt::format(" after reading {} MB", o.evict_b_mb) : "";
  fmt::print("B {}{}{}: median of round medians {:.4f} ms (best round {:.4f})\n", o.engines[1],
             o.env_b.empty() ? "" : " with " + o.env_b, evicted, median(mb),
             *std::min_element(mb.begin(), mb.end()));
  fmt::print("B/A: median {:.4f} over {} rounds of {} runs, quartiles {:.4f}-{:.4f}\n",
             median(ratio), o.rounds, o.runs, peers::percentile(ratio, 25),
             peers::percentile(ratio, 75));
  return 0;
}
