#include "report/report_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "report/charts.h"
#include "report/report_tables.h"

namespace kiln::cli::report {
namespace {

// A file-name-safe id: letters, digits and '-' only.
std::string slug(std::string_view kind, std::string_view text) {
  std::string s(kind);
  s += '-';
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    s += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
  }
  return s;
}

std::string unique_id(std::set<std::string>& used, std::string id) {
  std::string candidate = id;
  for (int i = 2; !used.insert(candidate).second; ++i) candidate = fmt::format("{}-{}", id, i);
  return candidate;
}

std::string config_label(const RowKey& k, bool threads_vary) {
  std::string s = k.batch ? fmt::format("batch {}", *k.batch) : "batch \u2014";
  if (threads_vary) s += fmt::format(" \u00b7 {} threads", format_threads(k.streams, k.threads));
  return s;
}

std::string row_title(const Row& r) {
  return fmt::format("{} {} {} {}", r.key.model, r.key.precision,
                     r.key.batch ? fmt::format("batch {}", *r.key.batch) : "", r.key.backend);
}

// Indexes `label` in `labels`, appending it when new.
size_t index_of(std::vector<std::string>& labels, const std::string& label) {
  auto it = std::find(labels.begin(), labels.end(), label);
  if (it != labels.end()) return static_cast<size_t>(it - labels.begin());
  labels.push_back(label);
  return labels.size() - 1;
}

// The model's rows (with a p50 when `need_p50`), in series order: the backends' order (kiln
// first), then precision, streams and threads, so a backend keeps its colour across charts.
std::vector<const Row*> series_rows(const ReportModel& m, const std::string& model, bool need_p50) {
  std::vector<const Row*> rows;
  for (const Row& r : m.rows) {
    if (r.key.model == model && (r.p50_ms || !need_p50)) rows.push_back(&r);
  }
  const auto rank = [&](const Row* r) {
    const auto b = std::find(m.backends.begin(), m.backends.end(), r->key.backend);
    return std::make_tuple(b - m.backends.begin(), precision_rank(r->key.precision),
                           r->key.precision, r->key.streams, r->key.threads.value_or(0));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Row* a, const Row* b) { return rank(a) < rank(b); });
  return rows;
}

Figure latency_figure(const ReportModel& m, const std::string& model) {
  BarChart c;
  c.title = model + ": latency per query";
  c.y_label = "latency (ms)";
  c.category_label = m.threads_vary ? "batch · threads" : "batch";
  for (const Row& r : m.rows) {  // categories in row order: batch, streams, threads
    if (r.key.model == model && r.p50_ms)
      index_of(c.categories, config_label(r.key, m.threads_vary));
  }
  std::vector<std::string> series;
  for (const Row* row : series_rows(m, model, true)) {
    const Row& r = *row;
    const size_t ci = index_of(c.categories, config_label(r.key, m.threads_vary));
    const size_t si = index_of(series, r.key.backend + " " + r.key.precision);
    if (si >= c.series.size()) c.series.push_back({series[si], {}});
    std::vector<std::optional<BarValue>>& values = c.series[si].values;
    if (values.size() <= ci) values.resize(ci + 1);
    values[ci] = BarValue{*r.p50_ms, r.p99_ms,
                          fmt::format("{} {}: p50 {} ms, p99 {} ms", series[si], c.categories[ci],
                                      format_value(r.p50_ms), format_value(r.p99_ms))};
  }
  return {"", "latency",
          fmt::format("{}: p50 latency of one query (bars) and p99 (whiskers), by precision and "
                      "backend.",
                      model),
          render_bar_chart(c)};
}

Figure throughput_figure(const ReportModel& m, const std::string& model) {
  LineChart c;
  c.title = model + ": throughput against batch size";
  c.x_label = "batch size";
  c.y_label = "inferences/s";
  std::vector<std::string> names;
  std::set<double> batches;
  for (const Row* row : series_rows(m, model, false)) {
    const Row& r = *row;
    if (!r.key.batch) continue;
    std::string name = r.key.backend + " " + r.key.precision;
    if (m.threads_vary)
      name += fmt::format(", {} threads", format_threads(r.key.streams, r.key.threads));
    const size_t si = index_of(names, name);
    if (si >= c.series.size()) c.series.push_back({name, {}});
    const double b = static_cast<double>(*r.key.batch);
    batches.insert(b);
    c.series[si].points.push_back({b, r.inferences_per_s,
                                   fmt::format("{}, batch {}: {} inferences/s", name, *r.key.batch,
                                               format_value(r.inferences_per_s))});
  }
  for (LineSeries& s : c.series) {
    std::sort(s.points.begin(), s.points.end(),
              [](const LinePoint& a, const LinePoint& b) { return a.x < b.x; });
  }
  c.x_ticks.assign(batches.begin(), batches.end());
  return {"", "throughput",
          fmt::format("{}: inferences per second (queries/s × batch) against the batch size, one "
                      "line per backend and precision; the batch axis is logarithmic.",
                      model),
          render_line_chart(c)};
}

Figure layers_figure(const Row& r) {
  const Run& run = *r.profiled;
  std::vector<LayerTime> layers = run.layers;
  double total = 0;
  for (const LayerTime& l : layers) total += l.average_ms;
  std::stable_sort(layers.begin(), layers.end(), [](const LayerTime& a, const LayerTime& b) {
    return a.average_ms > b.average_ms;
  });
  HBarChart c;
  c.title = row_title(r) + ": time per layer";
  c.x_label = "ms per query";
  for (size_t i = 0; i < layers.size() && i < kTopLayers; ++i) {
    const LayerTime& l = layers[i];
    c.bars.push_back({l.name, l.average_ms,
                      fmt::format("{} ms · {:.1f}%", format_value(l.average_ms), l.percent), l.name,
                      false});
  }
  if (layers.size() > kTopLayers) {
    double rest = 0, rest_pct = 0;
    for (size_t i = kTopLayers; i < layers.size(); ++i) {
      rest += layers[i].average_ms;
      rest_pct += layers[i].percent;
    }
    c.bars.push_back({fmt::format("other {} layers", layers.size() - kTopLayers), rest,
                      fmt::format("{} ms · {:.1f}%", format_value(rest), rest_pct),
                      "the remaining layers together", true});
  }
  c.note = fmt::format("{} layers, {} ms per query in all; profile from {}.", layers.size(),
                       format_value(total), run.profile_from);
  return {"", "layers",
          fmt::format("{}: the per-layer profile's slowest {} layers (ms per query; the share of "
                      "the profiled total after each bar), the others grouped in grey.",
                      row_title(r), std::min(layers.size(), kTopLayers)),
          render_hbar_chart(c)};
}

std::optional<Figure> error_figure(const Row& r, std::vector<std::string>& notes) {
  const Accuracy& a = *r.accuracy;
  const bool rel = std::any_of(a.layers.begin(), a.layers.end(),
                               [](const LayerError& e) { return e.rel_err.has_value(); });
  std::vector<std::pair<double, std::string>> errors;
  for (const LayerError& e : a.layers) {
    const std::optional<double> v = rel ? e.rel_err : e.max_abs_err;
    if (v) errors.emplace_back(*v, e.name);
  }
  if (errors.empty()) {
    notes.push_back(
        fmt::format("{}: accuracy.layers has neither rel_err nor max_abs_err; no "
                    "per-layer error chart",
                    row_title(r)));
    return std::nullopt;
  }
  std::stable_sort(errors.begin(), errors.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  HBarChart c;
  c.title = row_title(r) + ": per-layer error";
  c.x_label = rel ? "relative error ||x \u2212 ref|| / ||ref||" : "max |x \u2212 ref|";
  c.color = "#D55E00";
  for (size_t i = 0; i < errors.size() && i < kTopErrorLayers; ++i) {
    c.bars.push_back({errors[i].second, errors[i].first, fmt::format("{:.3g}", errors[i].first),
                      errors[i].second, false});
  }
  c.note = fmt::format("Against {}.", a.reference);
  if (errors.size() > kTopErrorLayers) {
    c.note += fmt::format(" {} more layers have smaller errors.", errors.size() - kTopErrorLayers);
  }
  return Figure{"", "layer-error",
                fmt::format("{}: the layers whose outputs differ most from {}, largest first.",
                            row_title(r), a.reference),
                render_hbar_chart(c)};
}

}  // namespace

std::vector<Figure> build_figures(const ReportModel& m, std::vector<std::string>& notes) {
  std::vector<Figure> out;
  std::set<std::string> ids;
  for (const std::string& model : m.models) {
    const auto has = [&](auto pred) {
      return std::any_of(m.rows.begin(), m.rows.end(),
                         [&](const Row& r) { return r.key.model == model && pred(r); });
    };
    if (has([](const Row& r) { return r.p50_ms.has_value(); })) {
      Figure f = latency_figure(m, model);
      f.id = unique_id(ids, slug("latency", model));
      out.push_back(std::move(f));
    } else {
      notes.push_back(fmt::format("{}: no run recorded a median latency; no latency chart", model));
    }
    if (has([](const Row& r) { return r.key.batch.has_value(); })) {
      Figure f = throughput_figure(m, model);
      f.id = unique_id(ids, slug("throughput", model));
      out.push_back(std::move(f));
    } else {
      notes.push_back(fmt::format("{}: no run recorded its batch; no throughput chart", model));
    }
  }
  size_t layer_charts = 0;
  for (const Row& r : m.rows) {
    if (r.profiled == nullptr) continue;
    if (++layer_charts > kMaxLayerCharts) {
      notes.push_back(fmt::format("{}: per-layer profile not drawn (at most {} such charts)",
                                  row_title(r), kMaxLayerCharts));
      continue;
    }
    Figure f = layers_figure(r);
    f.id = unique_id(ids, slug("layers", row_title(r)));
    out.push_back(std::move(f));
  }
  for (const Row& r : m.rows) {
    if (r.accuracy == nullptr || r.accuracy->layers.empty()) continue;
    if (auto f = error_figure(r, notes)) {
      f->id = unique_id(ids, slug("layer-error", row_title(r)));
      out.push_back(std::move(*f));
    }
  }
  return out;
}

}  // namespace kiln::cli::report
