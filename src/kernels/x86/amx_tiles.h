#pragma once
// The AMX tile configuration kiln's tile code uses (qvec_amx.h's convolution, bench/common's AMX
// peak probe): palette 1, tiles 0-7 of 16 rows x 64 bytes, loaded for a scope and released after
// it (the tile state is per thread; released, it costs nothing at a context switch). Inline asm,
// so that this header needs no -mamx flags; run it only where host_cpu_features() has amx_tile.

#include <cstdint>

namespace kiln::kernels::x86 {

class AmxTileScope {
 public:
  AmxTileScope() {
    Config c;
    for (int t = 0; t < 8; ++t) {
      c.colsb[t] = 64;
      c.rows[t] = 16;
    }
    // Not _tile_loadconfig: GCC 12's declares only the first 8 bytes as read, and dropped the
    // stores of the rest as dead in one build (the AMX peak probe, which then faulted).
    __asm__ volatile("ldtilecfg %0" ::"m"(c));
  }
  ~AmxTileScope() { __asm__ volatile("tilerelease" ::: "memory"); }
  AmxTileScope(const AmxTileScope&) = delete;
  AmxTileScope& operator=(const AmxTileScope&) = delete;

 private:
  struct alignas(64) Config {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
  };
};

}  // namespace kiln::kernels::x86
