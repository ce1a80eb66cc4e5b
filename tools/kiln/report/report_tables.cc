#include "report/report_tables.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace kiln::cli::report {
namespace {

constexpr const char* kNone = "\u2014";  // em dash: not recorded / not applicable

TableCell cell(std::string text, std::string css = "", std::string title = "") {
  return {std::move(text), std::move(css), std::move(title)};
}

TableCell ratio_cell(std::optional<double> r, const std::string& title) {
  std::string css;
  if (r) css = *r > 1 ? "faster" : *r < 1 ? "slower" : "";
  return cell(format_ratio(r), css, r ? title : "");
}

std::string batch_text(const std::optional<int64_t>& b) {
  return b ? std::to_string(*b) : std::string(kNone);
}

// Columns that would hold only "—" are left out.
struct OptionalColumns {
  bool engine = false, activations = false, accuracy = false, fp32 = false;
};

OptionalColumns optional_columns(const ReportModel& m) {
  OptionalColumns c;
  for (const Row& r : m.rows) {
    c.engine |= r.engine_bytes.has_value();
    c.activations |= r.activation_bytes.has_value();
    c.accuracy |= r.accuracy != nullptr;
    c.fp32 |= r.key.precision != "fp32" && r.speedup_vs_fp32.has_value();
  }
  return c;
}

void add_column(Table& t, std::string header, bool numeric) {
  t.headers.push_back(std::move(header));
  t.numeric.push_back(numeric);
}

Table results_table(const ReportModel& m) {
  const OptionalColumns c = optional_columns(m);
  Table t;
  t.id = "results";
  t.caption = "Results by configuration";
  t.note =
      "One row per model, precision, batch, threads and backend; runs of the same configuration "
      "are combined by their median. p50 and p99 are the latency of one query (one batch), in ms; "
      "inferences/s = queries/s × batch.";
  if (c.fp32) t.note += " Speed-up over fp32 = the same backend's fp32 p50 / this p50.";
  if (c.activations) {
    t.note +=
        " Activations: the arena the kiln engine plans (largest over its profiles, at "
        "their max shapes).";
  }
  for (const char* h : {"model", "precision", "batch"}) add_column(t, h, h == std::string("batch"));
  if (m.threads_vary) add_column(t, "threads", true);
  add_column(t, "backend", false);
  for (const char* h : {"p50 (ms)", "p99 (ms)", "inferences/s"}) add_column(t, h, true);
  if (c.fp32) add_column(t, "speed-up over fp32", true);
  if (c.engine) add_column(t, "engine", true);
  if (c.activations) add_column(t, "activations", true);
  if (c.accuracy) add_column(t, "accuracy \u0394", true);
  add_column(t, "runs", true);
  for (const Row& r : m.rows) {
    std::vector<TableCell> row = {cell(r.key.model), cell(r.key.precision),
                                  cell(batch_text(r.key.batch))};
    if (m.threads_vary) row.push_back(cell(format_threads(r.key.streams, r.key.threads)));
    row.push_back(cell(r.key.backend));
    row.push_back(cell(format_value(r.p50_ms)));
    row.push_back(cell(format_value(r.p99_ms)));
    row.push_back(cell(format_value(r.inferences_per_s)));
    if (c.fp32) {
      row.push_back(r.key.precision == "fp32"
                        ? cell(kNone)
                        : ratio_cell(r.speedup_vs_fp32, "fp32 p50 / this p50"));
    }
    if (c.engine) row.push_back(cell(format_bytes(r.engine_bytes)));
    if (c.activations) row.push_back(cell(format_bytes(r.activation_bytes)));
    if (c.accuracy) {
      row.push_back(r.accuracy ? cell(format_accuracy(*r.accuracy), "",
                                      "compared with " + r.accuracy->reference)
                               : cell(kNone));
    }
    row.push_back(cell(std::to_string(r.runs.size())));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table peers_table(const ReportModel& m) {
  Table t;
  t.id = "peers";
  t.caption = fmt::format("{} against {}", m.reference, fmt::join(m.peers, ", "));
  t.note = fmt::format(
      "Speed-up of {0} over a peer = the peer's p50 / {0}'s p50 in the same configuration "
      "(above 1: {0} is faster). p50 in ms.",
      m.reference);
  for (const char* h : {"model", "precision", "batch"}) add_column(t, h, h == std::string("batch"));
  if (m.threads_vary) add_column(t, "threads", true);
  add_column(t, m.reference + " p50", true);
  for (const std::string& p : m.peers) {
    add_column(t, p + " p50", true);
    add_column(t, "speed-up over " + p, true);
  }
  for (const PeerCell& pc : m.peer_cells) {
    const RowKey& k = pc.reference->key;
    std::vector<TableCell> row = {cell(k.model), cell(k.precision), cell(batch_text(k.batch))};
    if (m.threads_vary) row.push_back(cell(format_threads(k.streams, k.threads)));
    row.push_back(cell(format_value(pc.reference->p50_ms)));
    for (const std::string& p : m.peers) {
      auto it = pc.peer_rows.find(p);
      row.push_back(cell(it == pc.peer_rows.end() ? kNone : format_value(it->second->p50_ms)));
      row.push_back(ratio_cell(pc.speedup.at(p), p + " p50 / " + m.reference + " p50"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table runs_table(const ReportInputs& in) {
  Table t;
  t.id = "runs";
  t.caption = "Runs read";
  t.note =
      "Every summary in the folder, as recorded: the tool and its version, what ran the "
      "model, the queries timed and whether the run was stable (CoV within the tool's bound).";
  for (const char* h : {"file", "backend", "version", "device", "started", "queries", "stable",
                        "per-layer profile"}) {
    add_column(t, h, h == std::string("queries"));
  }
  for (const Run& r : in.runs) {
    const std::string stable = !r.stable ? kNone : *r.stable ? "yes" : "no";
    t.rows.push_back({cell(r.file), cell(r.backend), cell(r.version.empty() ? kNone : r.version),
                      cell(r.device.empty() ? kNone : r.device),
                      cell(r.started_at.empty() ? kNone : r.started_at),
                      cell(r.queries ? std::to_string(*r.queries) : kNone),
                      cell(stable, r.stable && !*r.stable ? "slower" : ""),
                      cell(r.layers.empty() ? kNone : r.profile_from)});
  }
  return t;
}

}  // namespace

std::string format_value(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return kNone;
  if (*v == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(*v))));
  const int decimals = std::clamp(3 - magnitude, 0, 6);
  return fmt::format("{:.{}f}", *v, decimals);
}

std::string format_ratio(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return kNone;
  return fmt::format("{:.2f}\u00d7", *v);
}

std::string format_bytes(std::optional<int64_t> v) {
  if (!v) return kNone;
  const double b = static_cast<double>(*v);
  if (b >= 1 << 30) return fmt::format("{:.2f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.1f} MiB", b / (1 << 20));
  if (b >= 1 << 10) return fmt::format("{:.0f} KiB", b / (1 << 10));
  return fmt::format("{} B", *v);
}

std::string format_threads(int streams, std::optional<int64_t> threads) {
  const std::string t = threads ? std::to_string(*threads) : std::string(kNone);
  return streams > 1 ? fmt::format("{}\u00d7{}", streams, t) : t;
}

std::string format_accuracy(const Accuracy& a) {
  if (a.delta && std::isfinite(*a.delta)) {
    const std::string sign = *a.delta > 0 ? "+" : *a.delta < 0 ? "\u2212" : "";
    return fmt::format("{}{}{:.3g}", a.metric.empty() ? "" : a.metric + " ", sign,
                       std::abs(*a.delta));
  }
  if (a.max_abs_err) return fmt::format("max |err| {:.1e}", *a.max_abs_err);
  return kNone;
}

std::vector<Table> build_tables(const ReportModel& model, const ReportInputs& inputs) {
  std::vector<Table> tables = {results_table(model)};
  if (!model.peers.empty() && !model.peer_cells.empty()) tables.push_back(peers_table(model));
  tables.push_back(runs_table(inputs));
  return tables;
}

}  // namespace kiln::cli::report
