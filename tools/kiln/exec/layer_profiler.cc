#include "exec/layer_profiler.h"

#include <algorithm>

#include "exec/statistics.h"

namespace kiln::cli::exec {

void LayerProfiler::on_layer(size_t node) {
  if (!armed_ || node >= slot_.size()) return;
  const Clock::time_point now = Clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
  last_ = now;
  if (slot_[node] < 0) {
    slot_[node] = static_cast<int>(order_.size());
    order_.push_back(node);
    times_.emplace_back();
  }
  times_[static_cast<size_t>(slot_[node])].push_back(ms);
  query_ms_ += ms;
}

void LayerProfiler::finish() {
  if (!armed_) return;
  armed_ = false;
  query_totals_.push_back(query_ms_);
  ++iterations_;
}

void LayerProfiler::merge(const LayerProfiler& other) {
  for (size_t s = 0; s < other.order_.size(); ++s) {
    const size_t node = other.order_[s];
    if (node >= slot_.size()) continue;
    if (slot_[node] < 0) {
      slot_[node] = static_cast<int>(order_.size());
      order_.push_back(node);
      times_.emplace_back();
    }
    auto& mine = times_[static_cast<size_t>(slot_[node])];
    mine.insert(mine.end(), other.times_[s].begin(), other.times_[s].end());
  }
  query_totals_.insert(query_totals_.end(), other.query_totals_.begin(), other.query_totals_.end());
  iterations_ += other.iterations_;
}

namespace {

ProfileRow row_of(size_t node, std::vector<double> times, size_t iterations) {
  const Stats s = compute_stats(std::move(times), {});
  ProfileRow r;
  r.node = node;
  r.total_ms = s.sum;
  // Per query, as trtexec: a layer that ran in every query has as many times as queries.
  r.average_ms = iterations > 0 ? s.sum / static_cast<double>(iterations) : 0;
  r.median_ms = s.count > 0 ? s.median : 0;
  return r;
}

}  // namespace

ProfileReport LayerProfiler::report() const {
  ProfileReport rep;
  rep.iterations = iterations_;
  for (size_t s = 0; s < order_.size(); ++s) {
    rep.rows.push_back(row_of(order_[s], times_[s], iterations_));
  }
  rep.total = row_of(0, query_totals_, iterations_);
  for (ProfileRow& r : rep.rows) {
    r.percent = rep.total.total_ms > 0 ? r.total_ms / rep.total.total_ms * 100 : 0;
  }
  rep.total.percent = 100;
  return rep;
}

}  // namespace kiln::cli::exec
