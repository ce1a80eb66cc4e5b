#include "tuner/tuner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <variant>

namespace kiln::tuner {
namespace {

using Clock = std::chrono::steady_clock;

// A job of nothing on every thread of the pool: inside a segment, it leaves the threads spinning
// for the next job, as after a layer.
void run_empty_job(parallel::ThreadPool& pool) {
  parallel::parallel_for(&pool, pool.size(), 1, [](int64_t, int64_t) {});
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A candidate whose first run takes this many times the fastest's, and 10 ms more, is not run
// again: the portable INT8 kernels (50-100x the VNNI ones) had taken 80% of ResNet-50's INT8
// build. The slack keeps a kernel of a few milliseconds that lost its core once (the host takes
// it for milliseconds at a time) in the running; below it the cap bounds the cost.
constexpr double kOutpacedRatio = 4.0;
constexpr double kOutpacedSlackMs = 10.0;

// Timed runs per candidate by optimization level, and the time after which a candidate stops
// being repeated (a slow reference kernel should not dominate the build); layers whose rounds
// take under a millisecond run three times as many, up to 15 (at the default level 10 more
// rounds: at most 10 ms).
Rounds rounds_for(int level) {
  const int repeats = std::array{0, 1, 3, 5, 9, 15}[std::clamp(level, 0, 5)];
  return Rounds{.repeats = repeats,
                .cap_ms = 40.0 * std::clamp(level, 1, 5),
                .short_repeats = std::min(15, 3 * repeats),
                .short_round_ms = 1.0,
                .outpaced_ratio = kOutpacedRatio,
                .outpaced_slack_ms = kOutpacedSlackMs};
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string attr_to_string(const ir::AttrValue& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return fmt::format("tensor{}", dims_to_string(x.dims()));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<float>> ||
                             std::is_same_v<T, std::vector<std::string>>) {
          return fmt::format("[{}]", fmt::join(x, ","));
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

}  // namespace

void fill_timing_input(Tensor& t) {
  uint32_t s = 0x9e3779b9u;
  auto next = [&s] { return s = s * 1664525u + 1013904223u; };
  if (t.dtype() == DType::kF32) {
    float* p = static_cast<float*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) {
      p[i] = static_cast<float>(next() >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
  } else if (t.dtype() == DType::kU8 || t.dtype() == DType::kI8) {
    auto* p = static_cast<uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>(next() >> 24);
  } else {
    std::memset(t.raw_data(), 0, t.nbytes());
  }
}

std::string layer_signature(const TuningLayer& layer, int threads) {
  const ir::Node& node = *layer.spec.node;
  std::string s = fmt::format("{}{}{}", node.domain, node.domain.empty() ? "" : "::", node.op_type);
  for (const auto& [name, value] : node.attrs.all()) {
    s += fmt::format("|{}={}", name, attr_to_string(value));
  }
  for (size_t i = 0; i < layer.input_dims.size(); ++i) {
    if (!layer.spec.has_input(i)) {
      s += "|in:-";
      continue;
    }
    s += fmt::format("|in:{}{}{}{}", dtype_name(layer.spec.inputs[i].dtype),
                     dims_to_string(layer.input_dims[i]), layer.spec.constant(i) ? "c" : "",
                     layer.is_graph_input(i) ? "g" : "");
  }
  for (size_t i = 0; i < layer.output_dims.size(); ++i) {
    s += fmt::format("|out:{}{}", dtype_name(layer.spec.outputs[i].dtype),
                     dims_to_string(layer.output_dims[i]));
  }
  return s + fmt::format("|threads={}", threads);
}

Tuner::Tuner(TunerOptions options) : options_(std::move(options)) {
  threads_ = parallel::thread_count(options_.threads);
  caches_ = host_cache_sizes();
  if (threads_ > 1 && options_.optimization_level > 0) {
    pool_ = std::make_unique<parallel::ThreadPool>(threads_);
  }
}

bool Tuner::budget_spent(double more_s) const {
  return options_.budget_s > 0 && seconds_measuring_ + more_s >= options_.budget_s;
}

std::vector<Tuner::Applicable> Tuner::screen(const tactics::LayerSpec& spec,
                                             LayerChoice& choice) const {
  std::vector<Applicable> ok;
  for (const tactics::Tactic* t : tactics::tactics_for(spec.node->domain, spec.node->op_type)) {
    tactics::TacticTiming c{std::string(t->name())};
    const uint64_t missing = t->required_features() & ~options_.features;
    if (t->source() != "ref" && options_.disabled_sources.count(t->source()) != 0) {
      c.note = fmt::format("rejected: source '{}' is disabled", t->source());
    } else if (missing != 0) {
      c.note =
          fmt::format("rejected: needs {}, which this CPU lacks", cpu_features_to_string(missing));
    } else if (std::string why = t->why_not(spec); !why.empty()) {
      c.note = "rejected: " + why;
    } else {
      ok.push_back(Applicable{t, choice.candidates.size()});
    }
    choice.candidates.push_back(std::move(c));
  }
  // The reference fallback is the oracle, not an implementation: it competes only when nothing
  // else applies.
  const auto is_ref = [](const Applicable& a) { return a.tactic->source() == "ref"; };
  if (!std::all_of(ok.begin(), ok.end(), is_ref)) {
    std::erase_if(ok, [&](const Applicable& a) {
      if (!is_ref(a)) return false;
      choice.candidates[a.candidate].note =
          "rejected: the reference fallback; a faster tactic applies";
      return true;
    });
  }
  return ok;
}

std::vector<Samples> time_interleaved(size_t n, const Rounds& rounds,
                                      const std::function<Result<double>(size_t)>& run_once,
                                      const std::function<bool()>& stop,
                                      const std::function<bool(int)>& round_ok) {
  std::vector<Samples> out(n);
  std::vector<double> total(n, 0.0);
  std::vector<bool> live(n, true);
  // One round: every live candidate once, its time in `round` (-1: not run); a failure ends its
  // candidate at once. False at a stop, which keeps the times the round took so far.
  std::vector<double> round(n);
  const auto time_round = [&] {
    std::fill(round.begin(), round.end(), -1.0);
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      if (stop()) {
        for (size_t j = 0; j < i; ++j) {
          if (live[j] && round[j] >= 0) out[j].ms.push_back(round[j]);
        }
        return false;
      }
      Result<double> t = run_once(i);
      if (!t.is_ok()) {
        out[i] = Samples{{}, t.status()};
        live[i] = false;
        continue;
      }
      round[i] = *t;
    }
    return true;
  };
  // After the first round: ends the candidates it found outpaced. True while any is left.
  const auto drop_outpaced = [&] {
    double best = -1;
    for (size_t i = 0; i < n; ++i) {
      if (live[i] && (best < 0 || round[i] < best)) best = round[i];
    }
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (live[i] && round[i] > rounds.outpaced_ratio * best + rounds.outpaced_slack_ms) {
        live[i] = false;
        out[i].outpaced = true;
      }
      any = any || live[i];
    }
    return any;
  };
  bool short_rounds = true;  // every round so far under short_round_ms
  const auto wanted = [&] {
    return short_rounds ? std::max(rounds.repeats, rounds.short_repeats) : rounds.repeats;
  };
  for (int r = 0; r < wanted(); ++r) {
    int attempt = 0;
    do {
      if (!time_round()) return out;
    } while (round_ok && !round_ok(attempt++));
    bool any = false;
    double round_ms = 0;
    for (size_t i = 0; i < n; ++i) {
      if (!live[i]) continue;
      out[i].ms.push_back(round[i]);
      round_ms += round[i];
      total[i] += round[i];
      live[i] = !(r >= 1 && total[i] > rounds.cap_ms);
      any = any || live[i];
    }
    short_rounds = short_rounds && round_ms < rounds.short_round_ms;
    if (r == 0 && rounds.outpaced_ratio > 0) any = drop_outpaced();
    if (!any) break;
  }
  return out;
}

// A candidate ready to be timed: its weights packed ahead of time (packing is not timed, as the
// engine packs at build time) and its kernel reshaped to the layer's buffers and run once (caches,
// lazily packed state). The packed weights and the spec the kernel was made from stay where they
// are while trials move, as the engine's do for its kernels.
struct Tuner::Trial {
  std::unique_ptr<Tensor> packed;
  std::unique_ptr<tactics::LayerSpec> spec;
  std::unique_ptr<tactics::LayerKernel> kernel;
};

Result<Tuner::Trial> Tuner::prepare(const tactics::Tactic& tactic, const TuningLayer& layer,
                                    std::span<const TensorView> in,
                                    std::span<const TensorView> out) {
  Trial trial;
  KILN_ASSIGN_OR_RETURN(Tensor packed, tactic.prepack(layer.spec));
  trial.packed = std::make_unique<Tensor>(std::move(packed));
  trial.spec = std::make_unique<tactics::LayerSpec>(layer.spec);
  if (trial.packed->defined()) trial.spec->prepacked = trial.packed.get();
  KILN_ASSIGN_OR_RETURN(trial.kernel, tactic.instantiate(*trial.spec));
  trial.kernel->set_thread_pool(pool_.get());
  KILN_RETURN_IF_ERROR(trial.kernel->reshape(in, out));
  KILN_RETURN_IF_ERROR(trial.kernel->run(in, out));
  return trial;
}

// What to read before each timed run of the layer (tuner/cold_cache.h): nothing for weights under
// TunerOptions::cold_weight_bytes when set; else every thread's L2 twice over plus twice the
// weights, at most 1.5 times the shared cache. The
// weights surely leave the L2s; the shared cache may still hold some of them (the flush buffer's
// own lines hit there from the previous flush), as it may in the network.
size_t Tuner::cold_flush_bytes(const tactics::LayerSpec& spec) const {
  const size_t weights = constant_bytes(spec);
  if (options_.cold_weight_bytes && weights <= *options_.cold_weight_bytes) return 0;
  return std::min(caches_.llc_bytes * 3 / 2,
                  2 * static_cast<size_t>(threads_) * caches_.l2_bytes + 2 * weights);
}

// What a layer on threads of its own (Tactic::runs_own_threads) costs in the network beyond its
// run: the pool's segment it interrupts starts again after it, with an OpenMP region of its own
// (ThreadPool::run_segment; 3.7-3.9 us on the Zen 5 2-vCPU host, nothing with the threads backend).
// The median of 31 empty segments, measured once.
double Tuner::segment_break_ms() {
  if (pool_ == nullptr) return 0;
  if (segment_break_ms_ < 0) {
    std::vector<double> ms;
    for (int i = 0; i < 31; ++i) {
      const Clock::time_point t0 = Clock::now();
      pool_->run_segment([&] { run_empty_job(*pool_); });
      ms.push_back(seconds_since(t0) * 1e3);
    }
    std::nth_element(ms.begin(), ms.begin() + 15, ms.end());
    segment_break_ms_ = ms[15];
  }
  return segment_break_ms_;
}

// Times the candidates `todo` on shared buffers (arbitrary inputs where the layer gives no
// values), interleaved (time_interleaved), and records each median, or why there is none.
void Tuner::measure(const TuningLayer& layer, std::span<const Applicable> todo, LayerChoice& choice,
                    Clock::time_point start) {
  const tactics::LayerSpec& spec = layer.spec;
  std::vector<Tensor> owned;
  owned.reserve(layer.input_dims.size() + layer.output_dims.size());
  std::vector<TensorView> in(layer.input_dims.size()), out(layer.output_dims.size());
  // The inputs the layer before (all threads) or the caller (one thread) would have written.
  std::vector<std::pair<TensorView, bool>> activations;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!spec.has_input(i)) continue;
    if (const Tensor* v = i < layer.values.size() ? layer.values[i] : nullptr) {
      in[i] = TensorView::of(*v);
      continue;
    }
    owned.emplace_back(spec.inputs[i].dtype, layer.input_dims[i]);
    fill_timing_input(owned.back());
    in[i] = TensorView::of(owned.back());
    if (spec.constant(i) == nullptr) activations.emplace_back(in[i], layer.is_graph_input(i));
  }
  for (size_t i = 0; i < out.size(); ++i) {
    owned.emplace_back(spec.outputs[i].dtype, layer.output_dims[i]);
    out[i] = TensorView::of(owned.back());
  }
  std::vector<Trial> trials;
  std::vector<const Applicable*> timed;
  for (const Applicable& a : todo) {
    tactics::TacticTiming& c = choice.candidates[a.candidate];
    Result<Trial> trial = prepare(*a.tactic, layer, in, out);
    if (!trial.is_ok()) {
      c.note = "failed when timed: " + trial.status().message();
      continue;
    }
    trials.push_back(std::move(*trial));
    timed.push_back(&a);
  }
  // Made at the first layer timed: a build whose times all come from the cache needs none.
  if (pool_ != nullptr && guard_ == nullptr) {
    guard_ = std::make_unique<HostSpeedGuard>(pool_.get(), options_.host_probe_us);
  }
  const size_t flush_bytes = cold_flush_bytes(spec);
  const bool cold = flush_bytes > 0;
  if (cold && (!flusher_ || flusher_->bytes() < flush_bytes)) {
    flusher_ = std::make_unique<CacheFlusher>(flush_bytes);
  }
  const auto run_once = [&](size_t i) -> Result<double> {
    if (cold) {
      flusher_->flush(pool_.get(), flush_bytes);
      for (const auto& [a, graph_input] : activations) {
        if (!graph_input) flusher_->touch(pool_.get(), a.data, a.nbytes());
      }
      ++flushes_;
    }
    if (pool_ == nullptr || timed[i]->tactic->runs_own_threads()) {
      const Clock::time_point t0 = Clock::now();
      KILN_RETURN_IF_ERROR(trials[i].kernel->run(in, out));
      return seconds_since(t0) * 1e3;
    }
    // As the context runs it: inside a segment of the pool (ThreadPool::run_segment) whose threads
    // already wait for work (the empty job), as after the layer before.
    Status st;
    double ms = 0;
    pool_->run_segment([&] {
      run_empty_job(*pool_);
      const Clock::time_point t0 = Clock::now();
      st = trials[i].kernel->run(in, out);
      ms = seconds_since(t0) * 1e3;
    });
    KILN_RETURN_IF_ERROR(st);
    return ms;
  };
  const auto stop = [&] { return budget_spent(seconds_since(start)); };
  bool slow = false;
  std::function<bool(int)> round_ok;
  if (guard_)
    round_ok = [&](int attempt) { return guard_->round_ok(attempt, slow, choice.probe_us); };
  const std::vector<Samples> samples = time_interleaved(
      trials.size(), rounds_for(options_.optimization_level), run_once, stop, round_ok);
  for (size_t i = 0; i < samples.size(); ++i) {
    tactics::TacticTiming& c = choice.candidates[timed[i]->candidate];
    if (!samples[i].error.is_ok()) {
      c.note = "failed when timed: " + samples[i].error.message();
      continue;
    }
    if (samples[i].ms.empty()) {
      c.note = "not timed: the build budget is spent";
      continue;
    }
    std::vector<double> ms = samples[i].ms;
    std::sort(ms.begin(), ms.end());
    c.ms = ms[ms.size() / 2];
    if (cold) c.note = "timed with cold caches";
    if (timed[i]->tactic->runs_own_threads() && segment_break_ms() > 0) {
      c.ms += segment_break_ms();
      c.note += fmt::format("{}with {:.1f} us for the pool's segment it interrupts",
                            c.note.empty() ? "" : "; ", segment_break_ms() * 1e3);
    }
    if (samples[i].outpaced) {
      c.note += fmt::format("{}timed once: over {:g}x the fastest", c.note.empty() ? "" : "; ",
                            kOutpacedRatio);
    }
    // Times taken while the host ran slow may rank the candidates as on a smaller machine: said
    // so. They are cached all the same: a rebuild with the cache makes the same choice, and a
    // host that stays busy (a test suite on every core) would otherwise time every rebuild.
    if (slow) c.note += std::string(c.note.empty() ? "" : "; ") + "timed while the host ran slow";
    ++times_measured_;
    if (options_.cache) options_.cache->add(layer_signature(layer, threads_), c.tactic, c.ms);
  }
}

Result<LayerChoice> Tuner::choose(const TuningLayer& layer, Retime retime) {
  LayerChoice choice;
  const std::vector<Applicable> ok = screen(layer.spec, choice);
  const ir::Node& node = *layer.spec.node;
  if (ok.empty()) {
    std::vector<std::string> why;
    for (const tactics::TacticTiming& c : choice.candidates) {
      why.push_back(fmt::format("{}: {}", c.tactic, c.note));
    }
    return unsupported("node '{}' ({}): no tactic can run it ({})", node.name, node.op_type,
                       fmt::join(why, "; "));
  }
  if (ok.size() == 1 || options_.optimization_level == 0) {
    const char* why = ok.size() == 1 ? "only candidate" : "not timed (optimization level 0)";
    for (const Applicable& a : ok) choice.candidates[a.candidate].note = why;
    choice.tactic = ok.front().tactic;
    return choice;
  }
  const std::string key = layer_signature(layer, threads_);
  const Clock::time_point start = Clock::now();
  std::vector<Applicable> todo;
  for (const Applicable& a : ok) {
    tactics::TacticTiming& c = choice.candidates[a.candidate];
    if (options_.cache && retime != Retime::kYes) {
      if (std::optional<double> t = options_.cache->find(key, c.tactic)) {
        c.ms = *t;
        c.note = "cached";
        times_cached_ += retime == Retime::kNo;
        continue;
      }
    }
    if (budget_spent(seconds_since(start))) {
      c.note = "not timed: the build budget is spent";
      continue;
    }
    todo.push_back(a);
  }
  if (!todo.empty()) {
    measure(layer, todo, choice, start);
    layers_timed_ += retime != Retime::kYes;
  }
  seconds_measuring_ += seconds_since(start);
  const Applicable* best = nullptr;
  for (const Applicable& a : ok) {
    const double t = choice.candidates[a.candidate].ms;
    if (t >= 0 && (best == nullptr || t < choice.candidates[best->candidate].ms)) best = &a;
  }
  // Nothing timed (budget spent, or every measurement failed): the preference order decides.
  choice.tactic = best ? best->tactic : ok.front().tactic;
  return choice;
}

std::vector<std::string> tactic_sources() {
  std::vector<std::string> out;
  for (const tactics::Tactic* t : tactics::all_tactics()) {
    const std::string s(t->source());
    if (s != "ref" && std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  return out;
}

Status apply_tactic_sources(std::span<const std::string> items,
                            std::set<std::string, std::less<>>& disabled) {
  const std::vector<std::string> known = tactic_sources();
  for (const std::string& item : items) {
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) {
      return invalid_argument("tactic source '{}' must be +name or -name (sources: {})", item,
                              fmt::join(known, ", "));
    }
    const std::string name = lower(std::string_view(item).substr(1));
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return invalid_argument("unknown tactic source '{}' (kiln's sources: {})", item.substr(1),
                              fmt::join(known, ", "));
    }
    if (item[0] == '-') {
      disabled.insert(name);
    } else {
      disabled.erase(name);
    }
  }
  return Status::ok();
}

}  // namespace kiln::tuner
