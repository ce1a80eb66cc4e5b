// The split search behind plan_util.h's split_tasks, shared by the float and INT8 planners.
#include "kernels/x86/plan_util.h"

#include <algorithm>

namespace kiln::kernels::x86 {
namespace {

Split blocks(int64_t m, int64_t n, int64_t m_blocks, int64_t n_blocks, int64_t mr, int64_t n_unit) {
  const Blocks mb = even_blocks(m, m_blocks, mr), nb = even_blocks(n, n_blocks, n_unit);
  return {mb.size, nb.size, mb.count, nb.count};
}

// The time of the slowest thread when `threads` run the split's tasks as run_tasks() does
// (contiguous ranges, channel blocks fastest), in computed lanes: a task costs its rows times its
// columns rounded up to the tile's grain, plus `overhead` lanes (its packing), plus its weight
// rows streamed in once (a row at about 4 bytes a cycle costs 16 lanes: an INT8 row of kq quads
// is 4 * kq bytes, a lane kq / 16 cycles of vpdpbusd; a float row of depth k is 4 * k bytes, an
// AVX-512 lane k / 16 cycles of FMA), plus the setup of its columns (BlockSetup).
int64_t makespan(const Split& s, int64_t m, int64_t n, int64_t units, int64_t nr, int threads,
                 int64_t overhead, const BlockSetup& setup) {
  const int64_t tasks = units * s.m_blocks * s.n_blocks;
  const int64_t parts = std::min<int64_t>(threads, tasks);
  const int64_t grain = setup.col_grain > 0 ? setup.col_grain : nr;
  int64_t worst = 0;
  for (int64_t part = 0; part < parts; ++part) {
    int64_t sum = 0, block = -1;
    for (int64_t t = part * tasks / parts; t < (part + 1) * tasks / parts; ++t) {
      const int64_t mb = t % s.m_blocks, nb = (t / s.m_blocks) % s.n_blocks;
      const int64_t rows = std::min(s.mc, m - mb * s.mc);
      const int64_t cols = std::min(s.nc, n - nb * s.nc);
      sum += rows * round_up(cols, grain) + overhead + 16 * rows + setup.per_col * cols;
      if (t / s.m_blocks != block) sum += setup.block_lanes(s.nc);
      block = t / s.m_blocks;
    }
    worst = std::max(worst, sum);
  }
  return worst;
}

}  // namespace

Split split_tasks(int64_t m, int64_t n, int64_t units, int64_t mr, int64_t nr, int64_t m_cap,
                  int64_t n_cap, int threads, const BlockSetup& setup, int64_t area_cap) {
  m = std::max<int64_t>(m, 1);
  n = std::max<int64_t>(n, 1);
  const int64_t m0 = ceil_div(m, std::max(mr, m_cap)), n0 = ceil_div(n, std::max(nr, n_cap));
  Split best = blocks(m, n, m0, n0, mr, nr);
  // Enough independent units (images x groups) balance themselves.
  if (threads <= 1 || units >= 4 * threads) return best;
  const int64_t overhead = 4 * mr * nr;  // a task's packing, in lanes: about 4 tiles' worth
  int64_t best_cost = makespan(best, m, n, units, nr, threads, overhead, setup);
  const int64_t m_max = std::min(ceil_div(m, mr), m0 + 4 * threads);
  const int64_t n_max = std::min(ceil_div(n, nr), n0 + 4 * threads);
  const auto consider = [&](const Split& s) {
    if (area_cap > 0 && s.mc * s.nc > area_cap) return;
    const int64_t cost = makespan(s, m, n, units, nr, threads, overhead, setup);
    const int64_t tasks = s.m_blocks * s.n_blocks, best_tasks = best.m_blocks * best.n_blocks;
    if (cost < best_cost || (cost == best_cost && tasks < best_tasks)) {
      best = s;
      best_cost = cost;
    }
  };
  for (int64_t nb = area_cap > 0 ? 1 : n0; nb <= n_max; ++nb) {
    for (int64_t mb = m0; mb <= m_max; ++mb) {
      consider(blocks(m, n, mb, nb, mr, nr));
      // A block that starts mid-row builds the rows it shares with its neighbour a second time;
      // blocks with no row setup may end at any vector (a flat INT8 1x1 layer's pixels).
      if (setup.per_row > 0) {
        consider(blocks(m, n, mb, nb, mr, setup.row));
      } else if (setup.col_grain > 0) {
        consider(blocks(m, n, mb, nb, mr, setup.col_grain));
      }
    }
  }
  return best;
}

}  // namespace kiln::kernels::x86
