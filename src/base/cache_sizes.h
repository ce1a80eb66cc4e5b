#pragma once
// The host's cache sizes, as the OS reports them (sysconf), with defaults where it does not say.
// The tuner sizes its cold-cache flush by them, and planners keep a task's weights within a core's
// L2.

#include <cstddef>

namespace kiln {

struct CacheSizes {
  size_t l2_bytes = 0;   // one core's
  size_t llc_bytes = 0;  // the last level, shared
};

// Read once per process.
const CacheSizes& host_cache_sizes();

}  // namespace kiln
