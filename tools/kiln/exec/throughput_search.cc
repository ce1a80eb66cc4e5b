#include "exec/throughput_search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "exec/report.h"
#include "exec/session.h"

namespace kiln::cli::exec {
namespace {

bool dynamic_batch(const ir::Value& in) {
  return in.desc.has_rank() && in.desc.rank() >= 1 && !in.desc.dim(0).is_known();
}

std::string inputs_text(const ir::Graph& g) {
  std::vector<std::string> parts;
  for (ir::ValueId v : g.inputs) {
    parts.push_back(fmt::format("{} {}", g.value(v).name, g.value(v).desc.to_string()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The dims an input runs with before the batch is set: --shapes, else the first profile's opt.
Dims base_dims(const runtime::Engine& engine, const ExecOptions& o, size_t input) {
  const ir::Value& in = engine.graph().value(engine.graph().inputs[input]);
  if (auto it = o.inference_shapes.find(in.name); it != o.inference_shapes.end()) {
    return it->second;
  }
  const auto& ranges = engine.plan().profiles[0].inputs;
  return input < ranges.size() ? ranges[input].opt : declared_dims(in);
}

}  // namespace

std::map<std::string, Dims> search_input_shapes(const runtime::Engine& engine, const ExecOptions& o,
                                                int64_t batch) {
  std::map<std::string, Dims> shapes = o.inference_shapes;
  const ir::Graph& g = engine.graph();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const ir::Value& in = g.value(g.inputs[i]);
    if (!dynamic_batch(in)) continue;
    Dims dims = base_dims(engine, o, i);
    if (!dims.empty()) dims[0] = batch;
    shapes[in.name] = std::move(dims);
  }
  return shapes;
}

namespace {

// --batches, or the one batch the run shapes give.
Result<std::vector<int64_t>> search_batches(const runtime::Engine& engine, const ExecOptions& o) {
  const ir::Graph& g = engine.graph();
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (!dynamic_batch(g.value(g.inputs[i]))) continue;
    if (!o.batches.empty()) return o.batches;
    const Dims dims = base_dims(engine, o, i);
    return std::vector<int64_t>{dims.empty() ? 1 : dims[0]};
  }
  if (!o.batches.empty()) {
    return invalid_argument("--batches: no input has a dynamic first dimension (inputs: {})",
                            inputs_text(g));
  }
  return std::vector<int64_t>{1};
}

SearchCandidate make_candidate(int64_t batch, int streams, BenchmarkSummary summary,
                               const SearchResult& r, size_t percentile_index) {
  SearchCandidate c;
  c.batch = batch;
  c.streams = streams;
  c.latency_ms = summary.compute.percentiles[percentile_index];
  c.inferences_per_s = summary.throughput_qps * static_cast<double>(batch);
  c.within_bound = r.bound_ms <= 0 || c.latency_ms <= r.bound_ms;
  c.summary = std::move(summary);
  return c;
}

}  // namespace

std::optional<size_t> pick_best(const std::vector<SearchCandidate>& candidates) {
  std::optional<size_t> best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const SearchCandidate& c = candidates[i];
    if (!c.within_bound) continue;
    if (!best) {
      best = i;
      continue;
    }
    const SearchCandidate& b = candidates[*best];
    const bool better = c.inferences_per_s != b.inferences_per_s
                            ? c.inferences_per_s > b.inferences_per_s
                            : (c.streams != b.streams ? c.streams < b.streams : c.batch < b.batch);
    if (better) best = i;
  }
  return best;
}

Result<engine::ProfileSpec> search_profile(const ir::Graph& graph, const ExecOptions& o) {
  engine::ProfileSpec spec;
  bool any_batch = false;
  for (ir::ValueId v : graph.inputs) {
    const ir::Value& in = graph.value(v);
    const auto given = o.inference_shapes.find(in.name);
    if (!in.desc.has_rank()) continue;  // the builder refuses it, naming the input
    bool dynamic = false;
    for (const ir::Dim& d : *in.desc.shape) dynamic |= !d.is_known();
    if (!dynamic && given == o.inference_shapes.end()) continue;
    const Dims base = given != o.inference_shapes.end() ? given->second : declared_dims(in);
    ShapeRange range{base, base, base};
    if (dynamic_batch(in) && !o.batches.empty() && !base.empty()) {
      range.min[0] = o.batches.front();
      range.opt[0] = range.max[0] = o.batches.back();
      any_batch = true;
    }
    spec[in.name] = std::move(range);
  }
  if (!o.batches.empty() && !any_batch) {
    return invalid_argument("--batches: no input has a dynamic first dimension (inputs: {})",
                            inputs_text(graph));
  }
  return spec;
}

Result<SearchResult> run_throughput_search(const runtime::Engine& engine, const ExecOptions& o,
                                           int max_streams, ExecLog& log) {
  SearchResult r;
  r.percentile = *std::max_element(o.percentiles.begin(), o.percentiles.end());
  r.bound_ms = o.latency_bound_ms;
  const size_t pi = static_cast<size_t>(
      std::max_element(o.percentiles.begin(), o.percentiles.end()) - o.percentiles.begin());
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> batches, search_batches(engine, o));
  const BenchmarkPolicy policy{o.iterations, o.warmup_ms, o.duration_s * 1000};
  log.info(fmt::format("Throughput search: batches {}, 1 to {} streams, latency at percentile({}%)",
                       fmt::join(batches, ","), max_streams, format_number(r.percentile)));
  for (int64_t batch : batches) {
    const InputFlags flags{search_input_shapes(engine, o, batch), {}, o.seed};
    KILN_ASSIGN_OR_RETURN(runtime::NamedTensors feeds, make_feeds(engine, flags, log));
    KILN_ASSIGN_OR_RETURN(std::vector<ContextPtr> owned,
                          make_contexts(engine, feeds, max_streams, o.threads));
    std::vector<runtime::ExecutionContext*> contexts;
    for (const ContextPtr& c : owned) contexts.push_back(c.get());
    for (int streams = 1; streams <= max_streams; ++streams) {
      KILN_ASSIGN_OR_RETURN(
          BenchmarkTrace trace,
          run_benchmark(std::span(contexts).first(static_cast<size_t>(streams)), policy, {}));
      r.candidates.push_back(
          make_candidate(batch, streams, summarize(trace, o.percentiles), r, pi));
      const SearchCandidate& c = r.candidates.back();
      log.info(fmt::format("batch {}, {} stream(s): {} inferences/s, percentile({}%) = {} ms{}",
                           batch, streams, format_number(c.inferences_per_s),
                           format_number(r.percentile), format_number(c.latency_ms),
                           c.within_bound ? "" : ", over the bound"));
      const std::optional<size_t> best = pick_best(r.candidates);
      if (best && *best == r.candidates.size() - 1) r.best_trace = std::move(trace);
      if (!c.within_bound) break;  // more streams only add contention
    }
  }
  r.best = pick_best(r.candidates);
  return r;
}

std::vector<std::string> search_lines(const SearchResult& r) {
  std::vector<std::string> out = {
      fmt::format("=== Throughput search (latency at percentile({}%), bound {}) ===",
                  format_number(r.percentile),
                  r.bound_ms > 0 ? format_number(r.bound_ms) + " ms" : "none"),
      "   Batch   Streams   Throughput(qps)   Inferences/s   Latency(ms)   Within bound"};
  for (const SearchCandidate& c : r.candidates) {
    out.push_back(fmt::format("{:>8}{:>10}{:>18.2f}{:>15.2f}{:>14.4f}{:>15}", c.batch, c.streams,
                              c.summary.throughput_qps, c.inferences_per_s, c.latency_ms,
                              c.within_bound ? "yes" : "no"));
  }
  if (!r.best) {
    out.push_back("No configuration meets the latency bound.");
    return out;
  }
  const SearchCandidate& b = r.candidates[*r.best];
  out.push_back(fmt::format(
      "Best: batch {}, {} stream(s): {} inferences/s, percentile({}%) = {} ms", b.batch, b.streams,
      format_number(b.inferences_per_s), format_number(r.percentile), format_number(b.latency_ms)));
  return out;
}

}  // namespace kiln::cli::exec
