#include "report/report_model.h"

#include <algorithm>
#include <array>
#include <tuple>

namespace kiln::cli::report {
namespace {

int backend_rank(const std::string& backend) {
  if (backend == "kiln") return 0;
  if (backend == "trtexec") return 1;
  return 2;
}

// Missing batch and threads sort first.
auto sort_tuple(const RowKey& k, const std::vector<std::string>& models) {
  const auto model_pos = std::find(models.begin(), models.end(), k.model) - models.begin();
  return std::make_tuple(model_pos, precision_rank(k.precision), k.precision, k.batch.value_or(0),
                         k.streams, k.threads.value_or(0), backend_rank(k.backend), k.backend);
}

bool same_key(const RowKey& a, const RowKey& b) {
  return a.model == b.model && a.precision == b.precision && a.batch == b.batch &&
         a.streams == b.streams && a.threads == b.threads && a.backend == b.backend;
}

std::vector<double> collect(const std::vector<const Run*>& runs,
                            std::optional<double> Run::*field) {
  std::vector<double> v;
  for (const Run* r : runs) {
    if (r->*field) v.push_back(*(r->*field));
  }
  return v;
}

void summarize(Row& row) {
  row.p50_ms = median(collect(row.runs, &Run::p50_ms));
  row.p99_ms = median(collect(row.runs, &Run::p99_ms));
  std::vector<double> per_s;
  for (const Run* r : row.runs) per_s.push_back(r->inferences_per_s());
  row.inferences_per_s = median(per_s).value_or(0);
  for (const Run* r : row.runs) {
    if (!row.engine_bytes && r->engine_bytes) row.engine_bytes = r->engine_bytes;
    if (!row.activation_bytes && r->activation_bytes) row.activation_bytes = r->activation_bytes;
    if (row.accuracy == nullptr && r->accuracy) row.accuracy = &*r->accuracy;
    if (row.profiled == nullptr && !r->layers.empty()) row.profiled = r;
  }
}

std::optional<double> ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || *den <= 0 || *num <= 0) return std::nullopt;
  return *num / *den;
}

const Row* find_row(const std::vector<Row>& rows, const RowKey& key) {
  for (const Row& r : rows) {
    if (same_key(r.key, key)) return &r;
  }
  return nullptr;
}

void fp32_speedups(std::vector<Row>& rows) {
  for (Row& row : rows) {
    RowKey fp32 = row.key;
    fp32.precision = "fp32";
    if (const Row* base = find_row(rows, fp32))
      row.speedup_vs_fp32 = ratio(base->p50_ms, row.p50_ms);
  }
}

void peer_cells(ReportModel& m) {
  for (const Row& row : m.rows) {
    if (row.key.backend != m.reference) continue;
    PeerCell cell;
    cell.reference = &row;
    for (const std::string& peer : m.peers) {
      RowKey key = row.key;
      key.backend = peer;
      const Row* p = find_row(m.rows, key);
      if (p == nullptr) {
        key.threads = std::nullopt;  // a peer that did not record its threads
        p = find_row(m.rows, key);
      }
      if (p != nullptr) cell.peer_rows[peer] = p;
      cell.speedup[peer] = p != nullptr ? ratio(p->p50_ms, row.p50_ms) : std::nullopt;
    }
    m.peer_cells.push_back(std::move(cell));
  }
}

}  // namespace

int precision_rank(const std::string& p) {
  static constexpr std::array<const char*, 6> kOrder = {"fp32", "tf32", "bf16",
                                                        "fp16", "fp8",  "int8"};
  for (size_t i = 0; i < kOrder.size(); ++i) {
    if (p == kOrder[i]) return static_cast<int>(i);
  }
  return static_cast<int>(kOrder.size());
}

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

ReportModel build_report_model(const std::vector<Run>& runs) {
  ReportModel m;
  for (const Run& r : runs) {
    if (std::find(m.models.begin(), m.models.end(), r.model) == m.models.end()) {
      m.models.push_back(r.model);
    }
    const RowKey key{r.model, r.precision, r.batch, r.streams, r.threads, r.backend};
    auto it = std::find_if(m.rows.begin(), m.rows.end(),
                           [&](const Row& row) { return same_key(row.key, key); });
    if (it == m.rows.end()) {
      m.rows.push_back(Row{key, {&r}});
    } else {
      it->runs.push_back(&r);
    }
  }
  std::stable_sort(m.rows.begin(), m.rows.end(), [&](const Row& a, const Row& b) {
    return sort_tuple(a.key, m.models) < sort_tuple(b.key, m.models);
  });
  for (Row& row : m.rows) summarize(row);
  fp32_speedups(m.rows);
  for (const Row& row : m.rows) {
    if (std::find(m.backends.begin(), m.backends.end(), row.key.backend) == m.backends.end()) {
      m.backends.push_back(row.key.backend);
    }
    const RowKey& first = m.rows.front().key;
    if (row.key.streams != first.streams || row.key.threads != first.threads) m.threads_vary = true;
  }
  std::sort(m.backends.begin(), m.backends.end(), [](const std::string& a, const std::string& b) {
    return std::make_pair(backend_rank(a), a) < std::make_pair(backend_rank(b), b);
  });
  m.reference = m.backends.empty() ? "" : m.backends.front();
  m.peers.assign(m.backends.begin() + (m.backends.empty() ? 0 : 1), m.backends.end());
  peer_cells(m);
  return m;
}

}  // namespace kiln::cli::report
