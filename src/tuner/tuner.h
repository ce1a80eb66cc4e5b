#pragma once
// Chooses each layer's tactic the way TensorRT's builder does: every tactic that can run the layer
// on this CPU, from the enabled sources, is timed on the layer's real shapes (the tuning profile's
// opt shapes) and the fastest is kept. Every candidate is reported with its time or the reason it
// was not timed, so the choice can be shown and explained (kiln inspect).
//
// Times come from the timing cache when it has them, so a rebuild on the same machine measures
// nothing it measured before. A build budget bounds the time spent measuring; once it is spent the
// remaining layers take cached times or, failing those, the tactics' preference order.

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/status.h"
#include "parallel/thread_pool.h"
#include "tactics/tactic.h"
#include "tuner/cold_cache.h"
#include "tuner/host_speed_guard.h"
#include "tuner/timing_cache.h"

namespace kiln::tuner {

struct TunerOptions {
  // trtexec's --builderOptimizationLevel: 0 times nothing (the preference order decides); 1-5 time
  // every candidate with more repetitions per level. 3 is the default.
  int optimization_level = 3;
  // Seconds of measuring allowed for the whole build; 0 means no limit.
  double budget_s = 0;
  // Sources whose tactics are not considered ("onednn"); the reference fallback cannot be disabled.
  std::set<std::string, std::less<>> disabled_sources;
  // Threads the layers are timed with: the engine should be tuned as it will run. 0: one per core.
  int threads = 0;
  CpuFeatureSet features = 0;  // tactics needing more than this are rejected
  TimingCache* cache = nullptr;
  // Layers whose constant inputs hold more bytes than this are timed with cold caches and their
  // activations just written (tuner/cold_cache.h); unset: every layer.
  std::optional<size_t> cold_weight_bytes;
  // Tests: the host speed guard's probe time in us, served in place of timing the probe
  // (tuner/host_speed_guard.h). Null: the probe runs.
  std::function<double()> host_probe_us;
};

// A layer as the tuner measures it: its spec, and concrete dims of every input and output at the
// tuning shapes. `values` gives an input's contents where they matter (weights, shape values);
// other inputs are filled with arbitrary data.
struct TuningLayer {
  tactics::LayerSpec spec;
  std::vector<Dims> input_dims;  // empty for an omitted optional input
  std::vector<Dims> output_dims;
  std::vector<const Tensor*> values;  // per input, may be null
  // Per input: a graph input. The tuner rewrites an activation before each timed run, as the
  // layer before writes it; a graph input it leaves to the flush (a benchmark feeds one input
  // over and over, which the network's traffic evicts between runs). May be empty.
  std::vector<bool> graph_inputs;
  bool is_graph_input(size_t i) const { return i < graph_inputs.size() && graph_inputs[i]; }
};

struct LayerChoice {
  const tactics::Tactic* tactic = nullptr;
  std::vector<tactics::TacticTiming> candidates;  // every tactic considered, in preference order
  // The host speed probe's slowest time after the rounds that timed the layer
  // (tuner/host_speed_guard.h); 0 when nothing was timed or there is no guard.
  double probe_us = 0;
};

// Whether Tuner::choose may take a layer's times from the timing cache (kNo), times it again
// (kYes), or takes them from the cache again after another layer's times there were renewed
// (kRefresh: not counted again in times_cached()).
enum class Retime { kNo, kYes, kRefresh };

class Tuner {
 public:
  explicit Tuner(TunerOptions options);
  Result<LayerChoice> choose(const TuningLayer& layer, Retime retime = Retime::kNo);
  // True when the choice was timed while the host ran slower than the guard's best time, as now
  // known, by more than HostSpeedGuard::kSlack: before the guard had seen the host at full speed.
  bool timed_slow(const LayerChoice& choice) const {
    return guard_ != nullptr && guard_->timed_slow(choice.probe_us);
  }

  int layers_timed() const { return layers_timed_; }
  int times_measured() const { return times_measured_; }
  int times_cached() const { return times_cached_; }
  // Cache flushes before timed runs of layers timed cold (tuner/cold_cache.h).
  int flushes() const { return flushes_; }
  // Rounds of timed runs done again because the host ran slow, and rounds kept though it did
  // (tuner/host_speed_guard.h).
  int rounds_retimed() const { return guard_ ? guard_->rounds_retimed() : 0; }
  int rounds_slow() const { return guard_ ? guard_->rounds_slow() : 0; }
  double seconds_measuring() const { return seconds_measuring_; }
  // True once the time spent measuring (plus `more_s` not yet counted) reaches the budget.
  bool budget_spent(double more_s = 0) const;

 private:
  struct Applicable {
    const tactics::Tactic* tactic;
    size_t candidate;  // index into LayerChoice::candidates
  };
  std::vector<Applicable> screen(const tactics::LayerSpec& spec, LayerChoice& choice) const;
  struct Trial;
  Result<Trial> prepare(const tactics::Tactic& tactic, const TuningLayer& layer,
                        std::span<const TensorView> in, std::span<const TensorView> out);
  size_t cold_flush_bytes(const tactics::LayerSpec& spec) const;
  double segment_break_ms();
  void measure(const TuningLayer& layer, std::span<const Applicable> todo, LayerChoice& choice,
               std::chrono::steady_clock::time_point start);

  TunerOptions options_;
  std::unique_ptr<parallel::ThreadPool> pool_;
  std::unique_ptr<CacheFlusher> flusher_;  // made for the first layer timed cold
  std::unique_ptr<HostSpeedGuard> guard_;  // with the pool, at the first layer timed
  CacheSizes caches_;
  int threads_ = 1;
  int layers_timed_ = 0;
  int times_measured_ = 0;
  int times_cached_ = 0;
  int flushes_ = 0;
  double seconds_measuring_ = 0;
  double segment_break_ms_ = -1;  // < 0: not measured yet
};

// How many rounds time_interleaved runs. Every candidate runs `repeats` times; a layer whose
// rounds all took under short_round_ms (the candidates' times summed) runs up to short_repeats:
// its runs are cheap, and a short run's time is the noisiest. MobileNetV2 (layers of 0.01 to 0.2
// ms), 9 engines built each way, each pair timed by kiln_ab in both orders: 15 rounds in place of
// 5 gave engines 0.985x as long to run (median; 0.96-1.005x).
struct Rounds {
  int repeats = 1;
  double cap_ms = 1e9;  // see time_interleaved
  int short_repeats = 0;
  double short_round_ms = 0;
  double outpaced_ratio = 0;  // 0: off; see time_interleaved
  double outpaced_slack_ms = 0;
};

// The timed runs of n candidates, interleaved: round r runs every candidate still being timed
// once, in order, so that a transient slowdown of the machine (another process taking the core
// for a scheduler tick) lands on one sample of several candidates, not on every sample of one;
// the median then drops it. A candidate stops after the rounds' repeats, or after two runs once
// its runs add up to more than cap_ms (a slow reference kernel should not dominate the build), or
// at its first failed run, or after the first round when it took more than outpaced_ratio times
// the round's fastest plus outpaced_slack_ms (it cannot win: the host's slow stretches run at half
// speed, and the slack covers a run that lost its core for a while; marked `outpaced`); `stop`
// ends all timing between runs (the build budget). After each
// round, `round_ok(attempt)` (when given) says whether the round counts: a round it rejects is
// run again, its times dropped, with attempt counting the tries of that round from 0 (the caller
// bounds them). Returns each candidate's times in ms, or the first error of one that failed (its
// times are then empty).
struct Samples {
  std::vector<double> ms;
  Status error = Status::ok();
  bool outpaced = false;
};
std::vector<Samples> time_interleaved(size_t n, const Rounds& rounds,
                                      const std::function<Result<double>(size_t)>& run_once,
                                      const std::function<bool()>& stop,
                                      const std::function<bool(int)>& round_ok = {});

// Deterministic, cheap contents for a timed layer's input whose values are not given: small
// floats (no denormals, no overflow in exp), arbitrary bytes for 8-bit tensors (INT8 activations:
// all zeros would let a kernel that skips zero inputs look hundreds of times faster than it runs),
// zeros for wider integers (valid indices everywhere).
void fill_timing_input(Tensor& t);

// The timing cache key of a layer: op, attributes, dtypes and dims, constant inputs and threads.
std::string layer_signature(const TuningLayer& layer, int threads);

// Applies trtexec-style "+name"/"-name" items to the set of disabled sources. Names are the
// sources of the registered tactics (case-insensitive); unknown names are refused, naming the known
// ones.
Status apply_tactic_sources(std::span<const std::string> items,
                            std::set<std::string, std::less<>>& disabled);

// The sources of the registered tactics, in registry order ("kiln", "onednn", ...), without "ref".
std::vector<std::string> tactic_sources();

}  // namespace kiln::tuner
