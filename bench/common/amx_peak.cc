// One ISA per translation unit: compiled with -mamx-tile -mamx-int8.
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/amx_tiles.h"

namespace kiln::bench {

// 4 independent tdpbsud chains (tiles 4-7, each 16 x 16 int32 += 16 x 64 s8 . 64 x 16 u8: 16384
// multiply-adds an instruction) over zeroed operand tiles 0 and 2, registers only: what the tile
// unit issues, the ceiling of kiln's AMX convolution (qconv.amx.u8s8 keeps 2 x 2 such tiles).
// Returns the remaining count (0) so that the call is not dead code.
int64_t amx_chains(int64_t rounds) {
  const kernels::x86::AmxTileScope tiles;
  _tile_zero(0);
  _tile_zero(2);
  _tile_zero(4);
  _tile_zero(5);
  _tile_zero(6);
  _tile_zero(7);
  int64_t r = rounds;
  for (; r > 0; --r) {
    _tile_dpbsud(4, 0, 2);
    _tile_dpbsud(5, 0, 2);
    _tile_dpbsud(6, 0, 2);
    _tile_dpbsud(7, 0, 2);
  }
  return r;
}

}  // namespace kiln::bench
