#pragma once
// conv_tap_pruning: drops the kernel taps of a Conv that read only padding for every output
// position, as a dilated convolution does when its rate reaches past the feature map (DeepLabV3's
// ASPP at rates 24 and 36 on a 16x16 or 33x33 map: its 3x3 convolutions are 1x1 ones in effect,
// multiplying zeros for 8 of their 9 taps).
//
// Along one spatial axis with input size H, kernel K, dilation d, stride s and pads (b, e), tap k
// reads input index o * s - b + k * d for outputs o in [0, O). A tap whose indices all fall outside
// [0, H) adds nothing. Only a run of such taps at either end of the axis can go (the kept taps stay
// evenly spaced): the kernel keeps taps [first, last], the pads shrink by the dropped taps' reach
// (b - first * d, e - (K - 1 - last) * d, the output size unchanged), and an axis left with one tap
// takes dilation 1, so the 1x1 kernels apply. Exact: the dropped products were all with zeros.
//
// Needs the input's spatial dims as numbers (the batch may vary), constant weights, and explicit
// pads (auto_pad NOTSET); an axis whose pads would turn negative, or whose every tap is dead, is
// left as it is. The cropped weights are a new constant; a QDQ model's per-channel weight scales
// carry over to it.

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& conv_tap_pruning_pass();

}  // namespace kiln::passes
