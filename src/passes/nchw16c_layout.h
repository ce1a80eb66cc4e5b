#pragma once
// The blocked activation layout between layers (ops/kiln_layout.h, kernels/ref/layout.h): float32
// 2-D Conv and kiln.FusedConv layers that a tactic runs on blocked tensors (PassContext::
// runs_blocked: the builder asks the tactics; kiln's x86 kernels take 1x1 with group 1 and no
// padding and depthwise, oneDNN's take dense ones of whole 16-channel blocks) become
// kiln.ConvNchw16c when their input or output joins another such layer, so chains of them
// (MobileNet's, EfficientNet's and ResNet's blocks) pass blocked tensors from one to the next.
// Reorders go only where a plain tensor meets a blocked one: kiln.ToNchw16c before the first
// blocked reader of a plain tensor, kiln.FromNchw16c after a blocked output that plain layers (or
// the user) read, which keeps the output's name and value. A lone candidate stays NCHW: two
// reorders for one layer cost more than its blocked kernel saves.
//
// Also blocked: a squeeze-and-excitation after a blocked convolution (GlobalAveragePool, and Mul
// by a [1 or N, C, 1, 1] scale, as kiln.GlobalAveragePoolNchw16c and kiln.MulNchw16c), a MaxPool
// after a blocked convolution or blocked MaxPool (kiln.MaxPoolNchw16c: ResNet's after its stem,
// YOLO's SPPF chain), and an
// image's first layer, which reads its few-channel input as NCHW and writes the blocked layout
// itself (x_layout "nchw") when a tactic takes that. Tensors of fewer than 8 channels otherwise
// stay NCHW unless their plane is one pixel: padding would at least double them.
//
// Runs after precision lowering (passes/pipeline.h), so it sees which layers stay float. Without
// a runs_blocked check (tests, tools), only where kiln's kernels run (AVX2 + FMA or AVX-512,
// under KILN_MAX_ISA).

#include "passes/pass.h"

namespace kiln::passes {

const PassDef& nchw16c_layout_pass();

}  // namespace kiln::passes
