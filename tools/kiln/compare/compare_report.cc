#include "compare/compare_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "exec/statistics.h"
#include "options.h"

namespace kiln::cli::compare {
namespace {

std::string db_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.1f}", v);
}

// JSON has no infinity: an exact match's SQNR (or relative error) is null.
nlohmann::ordered_json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

double percent_of(int64_t hits, int64_t n) { return n ? 100.0 * static_cast<double>(hits) / n : 0; }

std::string short_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

struct SampleSpread {
  double min = 1, median = 1;
  size_t min_sample = 0;
};

SampleSpread spread_of(const std::vector<double>& cosines) {
  SampleSpread s;
  if (cosines.empty()) return s;
  s.min_sample =
      static_cast<size_t>(std::min_element(cosines.begin(), cosines.end()) - cosines.begin());
  s.min = cosines[s.min_sample];
  std::vector<double> sorted = cosines;
  std::sort(sorted.begin(), sorted.end());
  s.median = exec::median_of_sorted(sorted);
  return s;
}

// The worst and the median sample's cosine of each output, when there are several samples.
void print_sample_spreads(const CompareResult& r, std::ostream& out) {
  for (const EngineResult& e : r.engines) {
    for (const OutputResult& o : e.outputs) {
      if (!o.not_comparable.empty() || o.sample_cosines.size() < 2) continue;
      const SampleSpread s = spread_of(o.sample_cosines);
      fmt::print(out, "[I] {} '{}': per sample cosine min {:.6f} (sample {}), median {:.6f}\n",
                 short_name(e.path), o.name, s.min, s.min_sample, s.median);
    }
  }
}

}  // namespace

void print_outputs(const CompareResult& r, std::ostream& out) {
  if (r.labelled) {
    fmt::print(out, "[I] labels: reference top-1 {:.2f}% ({}/{}) on output '{}'\n",
               percent_of(r.reference_correct, r.samples), r.reference_correct, r.samples,
               r.labelled_output);
  }
  size_t ew = 6, ow = 6;
  for (const EngineResult& e : r.engines) {
    ew = std::max(ew, short_name(e.path).size());
    for (const OutputResult& o : e.outputs) ow = std::max(ow, o.name.size());
  }
  fmt::print(out, "{:<{}} {:<{}} {:>10} {:>10} {:>10} {:>10} {:>8} {:>7} {:>7} {:>16}\n", "engine",
             ew, "output", ow, "max_abs", "max_rel", "mean_abs", "cosine", "sqnr_dB", "top1_ag",
             "top5_ag", "top1_acc (delta)");
  for (const EngineResult& e : r.engines) {
    for (const OutputResult& o : e.outputs) {
      if (!o.not_comparable.empty()) {
        fmt::print(out, "{:<{}} {:<{}} {}\n", short_name(e.path), ew, o.name, ow, o.not_comparable);
        continue;
      }
      const bool cls = o.classes > 0;
      const bool acc = r.labelled && o.name == r.labelled_output;
      fmt::print(out,
                 "{:<{}} {:<{}} {:>10.3g} {:>10.3g} {:>10.3g} {:>10.6f} {:>8} {:>7} {:>7} {:>16}\n",
                 short_name(e.path), ew, o.name, ow, o.err.max_abs_err(), o.err.max_rel_err(),
                 o.err.mean_abs_err(), o.err.cosine(), db_text(o.err.sqnr_db()),
                 cls ? fmt::format("{:.2f}%", o.agreement.top1_percent()) : "-",
                 cls ? fmt::format("{:.2f}%", o.agreement.top5_percent()) : "-",
                 acc ? fmt::format("{:.2f}% ({:+.2f})", percent_of(o.correct, r.samples),
                                   percent_of(o.correct, r.samples) -
                                       percent_of(r.reference_correct, r.samples))
                     : "-");
      if (o.err.nonfinite()) {
        fmt::print(out,
                   "[W] {} '{}': {} elements are NaN/Inf in only one of engine and reference\n",
                   e.path, o.name, o.err.nonfinite());
      }
    }
  }
  print_sample_spreads(r, out);
}

void print_layers(const CompareResult& r, int top, std::ostream& out) {
  for (const EngineResult& e : r.engines) {
    const std::vector<RankedLayer> ranked = rank_layers(e.layers, r.graph_inputs);
    size_t skipped = 0, width = 6;
    for (const LayerRecord& l : e.layers) {
      skipped += !l.not_comparable.empty();
      width = std::max(width, std::min<size_t>(l.tensor.size(), 60));
    }
    fmt::print(out,
               "\n[I] {}: {} tensors shared with the reference, {} compared{}; largest added "
               "error first (added = rel_err - worst input rel_err):\n",
               e.path, e.layers.size(), ranked.size(),
               skipped ? fmt::format(", {} not comparable", skipped) : "");
    fmt::print(out, "{:>4} {:<{}} {:>10} {:>10} {:>10} {:>8} {:>10}  {}\n", "rank", "tensor", width,
               "added", "rel_err", "in_rel_err", "sqnr_dB", "max_abs", "layer");
    for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < top; ++i) {
      const RankedLayer& l = ranked[i];
      const LayerRecord& rec = *l.record;
      fmt::print(
          out, "{:>4} {:<{}} {:>10.3g} {:>10.3g} {:>10.3g} {:>8} {:>10.3g}  {} [{}{}]\n", i + 1,
          rec.tensor, width, l.added, l.rel_err, l.input_rel_err, db_text(rec.err.sqnr_db()),
          rec.err.max_abs_err(), rec.layer, rec.op_type,
          rec.fused_from.empty() ? "" : fmt::format(", {} ONNX nodes", rec.fused_from.size()));
    }
    for (const LayerRecord& l : e.layers) {
      if (l.not_comparable.empty()) continue;
      fmt::print(
          out, "{:>4} {:<{}} {}{}\n", "-", l.tensor, width, l.not_comparable,
          l.engine_tensor != l.tensor ? fmt::format(" (engine tensor '{}')", l.engine_tensor) : "");
    }
  }
}

Result<Bounds> parse_bounds(std::string_view atol, std::string_view rtol, std::string_view cosine,
                            std::string_view top1) {
  Bounds b;
  KILN_ASSIGN_OR_RETURN(auto a, parse_optional_bound("--atol", atol, 1e30));
  KILN_ASSIGN_OR_RETURN(auto r, parse_optional_bound("--rtol", rtol, 1e30));
  KILN_ASSIGN_OR_RETURN(b.cosine, parse_optional_bound("--cosine", cosine, 1.0));
  KILN_ASSIGN_OR_RETURN(b.top1, parse_optional_bound("--top1", top1, 100.0));
  b.tol = {a.value_or(0), r.value_or(0), a.has_value() || r.has_value()};
  return b;
}

std::vector<std::string> check_bounds(const CompareResult& r, const Bounds& b) {
  std::vector<std::string> fails;
  for (const EngineResult& e : r.engines) {
    for (const OutputResult& o : e.outputs) {
      if (!o.not_comparable.empty()) continue;
      const std::string where = fmt::format("engine '{}' output '{}'", e.path, o.name);
      if (b.tol.active && o.err.allclose_failures() > 0) {
        fails.push_back(
            fmt::format("{}: allclose: {} of {} elements have |engine - ref| > atol + rtol*|ref| "
                        "(atol {}, rtol {}; max abs err {:.3g}, max rel err {:.3g})",
                        where, o.err.allclose_failures(), o.err.elements(), b.tol.atol, b.tol.rtol,
                        o.err.max_abs_err(), o.err.max_rel_err()));
      }
      if (b.cosine && !(o.err.cosine() >= *b.cosine)) {
        fails.push_back(
            fmt::format("{}: cosine {:.6f} < {} (--cosine)", where, o.err.cosine(), *b.cosine));
      }
      if (!b.top1 || o.classes == 0) continue;
      if (r.labelled && o.name == r.labelled_output) {
        const double drop =
            percent_of(r.reference_correct, r.samples) - percent_of(o.correct, r.samples);
        if (drop > *b.top1) {
          fails.push_back(
              fmt::format("{}: top-1 accuracy drop {:.2f} points > {} (--top1; "
                          "reference {:.2f}%, engine {:.2f}%)",
                          where, drop, *b.top1, percent_of(r.reference_correct, r.samples),
                          percent_of(o.correct, r.samples)));
        }
      } else if (100.0 - o.agreement.top1_percent() > *b.top1) {
        fails.push_back(fmt::format(
            "{}: top-1 agreement {:.2f}% is {:.2f} points below 100 > {} "
            "(--top1)",
            where, o.agreement.top1_percent(), 100.0 - o.agreement.top1_percent(), *b.top1));
      }
    }
  }
  return fails;
}

nlohmann::ordered_json accuracy_json(const CompareResult& r, const EngineResult& e) {
  nlohmann::ordered_json a;
  a["reference"] = fmt::format("kiln's reference executor on {}", r.onnx);
  a["samples"] = r.samples;
  double max_abs = 0;
  for (const OutputResult& o : e.outputs) max_abs = std::max(max_abs, o.err.max_abs_err());
  const OutputResult* labelled = nullptr;
  for (const OutputResult& o : e.outputs) {
    if (r.labelled && o.name == r.labelled_output) labelled = &o;
  }
  if (labelled) {
    a["metric"] = "top1_percent";
    a["value"] = percent_of(labelled->correct, r.samples);
    a["reference_value"] = percent_of(r.reference_correct, r.samples);
    a["delta"] =
        percent_of(labelled->correct, r.samples) - percent_of(r.reference_correct, r.samples);
  }
  a["max_abs_err"] = max_abs;
  if (!e.layers.empty()) {
    nlohmann::ordered_json layers = nlohmann::ordered_json::array();
    for (const LayerRecord& l : e.layers) {
      if (!l.not_comparable.empty() || !l.err.elements()) continue;
      layers.push_back({{"name", l.tensor},
                        {"rel_err", finite_or_null(l.err.rel_l2_err())},
                        {"max_abs_err", l.err.max_abs_err()},
                        {"sqnr_db", finite_or_null(l.err.sqnr_db())}});
    }
    a["layers"] = std::move(layers);
  }
  return a;
}

namespace {

nlohmann::ordered_json output_json(const CompareResult& r, const Bounds& b, const OutputResult& o) {
  nlohmann::ordered_json jo{{"name", o.name}};
  if (!o.not_comparable.empty()) {
    jo["not_comparable"] = o.not_comparable;
    return jo;
  }
  jo["elements"] = o.err.elements();
  jo["max_abs_err"] = o.err.max_abs_err();
  jo["max_rel_err"] = o.err.max_rel_err();
  jo["mean_abs_err"] = o.err.mean_abs_err();
  jo["rel_l2_err"] = finite_or_null(o.err.rel_l2_err());
  jo["cosine"] = o.err.cosine();
  const SampleSpread s = spread_of(o.sample_cosines);
  jo["sample_cosine"] = {{"min", s.min},
                         {"min_sample", s.min_sample},
                         {"median", s.median},
                         {"values", o.sample_cosines}};
  jo["sqnr_db"] = finite_or_null(o.err.sqnr_db());
  jo["allclose_failures"] =
      b.tol.active ? nlohmann::ordered_json(o.err.allclose_failures()) : nullptr;
  jo["nonfinite_mismatches"] = o.err.nonfinite();
  if (o.classes > 0) {
    jo["top1_agreement_percent"] = o.agreement.top1_percent();
    jo["top5_agreement_percent"] = o.agreement.top5_percent();
  }
  if (r.labelled && o.name == r.labelled_output) {
    jo["top1_percent"] = percent_of(o.correct, r.samples);
    jo["correct"] = o.correct;
  }
  return jo;
}

void add_layers_json(const CompareResult& r, const EngineResult& e, nlohmann::ordered_json& je) {
  nlohmann::ordered_json ranked = nlohmann::ordered_json::array();
  for (const RankedLayer& l : rank_layers(e.layers, r.graph_inputs)) {
    ranked.push_back({{"tensor", l.record->tensor},
                      {"layer", l.record->layer},
                      {"op_type", l.record->op_type},
                      {"fused_from", l.record->fused_from},
                      {"added_rel_err", finite_or_null(l.added)},
                      {"rel_err", finite_or_null(l.rel_err)},
                      {"input_rel_err", finite_or_null(l.input_rel_err)},
                      {"max_abs_err", l.record->err.max_abs_err()},
                      {"sqnr_db", finite_or_null(l.record->err.sqnr_db())}});
  }
  je["layers_ranked"] = std::move(ranked);
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  for (const LayerRecord& l : e.layers) {
    if (!l.not_comparable.empty()) {
      skipped.push_back(
          {{"tensor", l.tensor}, {"engine_tensor", l.engine_tensor}, {"reason", l.not_comparable}});
    }
  }
  je["layers_not_comparable"] = std::move(skipped);
}

nlohmann::ordered_json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

nlohmann::ordered_json compare_json(const CompareResult& r, const Bounds& b,
                                    const std::vector<std::string>& failures) {
  nlohmann::ordered_json j;
  j["schema"] = "kiln.compare";
  j["version"] = 1;
  j["onnx"] = r.onnx;
  j["inputs"] = r.inputs;
  j["samples"] = r.samples;
  j["batch"] = r.batch;
  const auto tol = [&](double v) { return b.tol.active ? std::optional<double>(v) : std::nullopt; };
  j["tolerances"] = {{"atol", optional_json(tol(b.tol.atol))},
                     {"rtol", optional_json(tol(b.tol.rtol))},
                     {"cosine", optional_json(b.cosine)},
                     {"top1", optional_json(b.top1)}};
  if (r.labelled) {
    j["labels"] = {{"output", r.labelled_output},
                   {"reference_top1_percent", percent_of(r.reference_correct, r.samples)},
                   {"reference_correct", r.reference_correct}};
  }
  nlohmann::ordered_json engines = nlohmann::ordered_json::array();
  for (const EngineResult& e : r.engines) {
    nlohmann::ordered_json je{{"engine", e.path}};
    nlohmann::ordered_json outs = nlohmann::ordered_json::array();
    for (const OutputResult& o : e.outputs) outs.push_back(output_json(r, b, o));
    je["outputs"] = std::move(outs);
    if (!e.layers.empty()) add_layers_json(r, e, je);
    je["accuracy"] = accuracy_json(r, e);
    engines.push_back(std::move(je));
  }
  j["engines"] = std::move(engines);
  j["failures"] = failures;
  j["passed"] = failures.empty();
  return j;
}

}  // namespace kiln::cli::compare
