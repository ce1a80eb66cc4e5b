#pragma once
// The parts of the nn family (ops/nn_*.cc); ops/nn.cc registers them all.
#include "ops/op_def.h"

namespace kiln::ops {

void register_conv_ops(OpRegistry& r);    // nn_conv.cc: Conv, ConvTranspose
void register_pool_ops(OpRegistry& r);    // nn_pool.cc: MaxPool, AveragePool, LpPool, Global*Pool
void register_norm_ops(OpRegistry& r);    // nn_norm.cc: BatchNormalization, InstanceNormalization,
                                          // LayerNormalization, LRN
void register_resize_ops(OpRegistry& r);  // nn_resize.cc: Resize, Upsample
void register_qconv_ops(OpRegistry& r);   // nn_qconv.cc: ConvInteger, QLinearConv
void register_unpool_mvn_ops(OpRegistry& r);  // nn_unpool.cc: MaxUnpool,
                                              // MeanVarianceNormalization
void register_roi_align_ops(OpRegistry& r);   // nn_roi_align.cc: RoiAlign

}  // namespace kiln::ops
