#include "base/cache_sizes.h"

#include <unistd.h>

#include <algorithm>

namespace kiln {

const CacheSizes& host_cache_sizes() {
  static const CacheSizes sizes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
    CacheSizes s;
    s.l2_bytes = l2 > 0 ? static_cast<size_t>(l2) : size_t{1} << 20;
    s.llc_bytes = std::max(s.l2_bytes, l3 > 0 ? static_cast<size_t>(l3) : size_t{32} << 20);
    return s;
  }();
  return sizes;
}

}  // namespace kiln
