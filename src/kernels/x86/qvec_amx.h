#pragma once
// The INT8 traits for AMX-INT8: the implicit-GEMM convolution's depth loop on tiles, everything
// else (panels, epilogue) as QVecVnni. Included only by qkernels_amx.cc, the one translation unit
// compiled with -mamx-tile -mamx-int8.
//
// tdpbsud C[16 x 16 int32] += A[16 x 64 s8] . B[16 x 64 u8] sums, per element, the 64 products of
// A's row (16 quads of weights: one output channel) with B's column (the same 16 quads of one
// pixel: B's row q holds quad q of 16 pixels, 4 bytes each). That B is the patch panel the vector
// kernels already build (quad-major, NR pixels a quad): a tile is its 64-byte column band, read
// with the panel's row stride. The weights are packed per 16-quad step as A's rows
// (qkernels_conv_impl.h's weight_quad_offset). 2 x 2 tiles of C (32 channels x 32 pixels) take 4
// of the 8 tile registers; two A and two B tiles the other 4, each used twice.

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/amx_tiles.h"
#include "kernels/x86/qvec_vnni.h"

namespace kiln::kernels::x86 {

struct QVecAmx : QVecVnni {
  static constexpr int kMr = kAmxBlocking.mr;
  static constexpr int kNv = kAmxBlocking.nr / kAmxBlocking.lanes;
  static constexpr int kTileQuads = kAmxBlocking.kq_step;
  static constexpr bool kPixelDot = false;
  static_assert(kTileQuads == 16 && kMr == 32 && kNv == 2, "2 x 2 tiles of 16 x 16");

  // Tiles 0-1 A (weights), 2-3 B (patches), 4-7 C.
  using TileScope = AmxTileScope;

  // kq (a multiple of 16) quads of the weight panel `a` (per step: 32 rows of 64 bytes) against
  // the patch panel `b` (NR * 4 bytes a quad); out[r * NV + v] = the sums of rows r < R and pixel
  // vector v < NV (from zero: the caller adds the zero point's start). Stores whole 16-row tiles:
  // out holds ceil(R / 16) * 16 * NV vectors. The row tiles past R and the pixel tile past NV are
  // never computed.
  template <int R, int NV>
  __attribute__((noinline)) static void tile_depth_loop(int64_t kq, const uint8_t* a,
                                                        const uint8_t* b, I* out) {
    static_assert(R >= 1 && R <= kMr && NV >= 1 && NV <= kNv);
    constexpr bool kTwoRows = R > 16, kTwoCols = NV > 1;
    constexpr int64_t kBRow = kNv * kLanes * 4, kARows = 16 * 64;
    _tile_zero(4);
    if constexpr (kTwoCols) _tile_zero(5);
    if constexpr (kTwoRows) _tile_zero(6);
    if constexpr (kTwoRows && kTwoCols) _tile_zero(7);
    // The asm of the tile intrinsics declares no memory access: the panels were written before
    // this call, and `out` is read after the stores below, hence the barriers.
    __asm__ volatile("" ::: "memory");
    for (int64_t q = 0; q < kq; q += kTileQuads, a += kMr * 64, b += kTileQuads * kBRow) {
      _tile_loadd(0, a, 64);
      _tile_loadd(2, b, kBRow);
      _tile_dpbsud(4, 0, 2);
      if constexpr (kTwoCols) {
        _tile_loadd(3, b + 64, kBRow);
        _tile_dpbsud(5, 0, 3);
      }
      if constexpr (kTwoRows) {
        _tile_loadd(1, a + kARows, 64);
        _tile_dpbsud(6, 1, 2);
        if constexpr (kTwoCols) _tile_dpbsud(7, 1, 3);
      }
    }
    constexpr int64_t kOutRow = NV * 64;
    auto* o = reinterpret_cast<uint8_t*>(out);
    _tile_stored(4, o, kOutRow);
    if constexpr (kTwoCols) _tile_stored(5, o + 64, kOutRow);
    if constexpr (kTwoRows) _tile_stored(6, o + 16 * kOutRow, kOutRow);
    if constexpr (kTwoRows && kTwoCols) _tile_stored(7, o + 16 * kOutRow + 64, kOutRow);
    __asm__ volatile("" ::: "memory");
  }
};

}  // namespace kiln::kernels::x86
