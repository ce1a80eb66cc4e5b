#pragma once
// constant_folding: replaces nodes whose outputs are known before running by initializers holding
// those outputs, computed with the ops' reference kernels.
//
// A node folds when every input is a constant (an initializer that is not an overridable graph
// input), when its outputs follow from input descs alone (Shape or Size of a tensor with a static
// shape), or when it is a Gather/Slice that picks only the known dims out of a Shape whose input
// has symbolic ones (Shape(x)[1] with x:[batch,3,224,224] is 3). This turns PyTorch's
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains into constant Reshape shapes.
//
// It never folds a nondeterministic op, a node producing a graph output (the output must still be
// produced by a node), or a node whose result would be much larger than the constants it reads
// (see constant_folding.cc). A kernel error leaves the node in place: running it reports the error.

#include "ir/graph.h"
#include "passes/pass.h"

namespace kiln::passes {

const PassDef& constant_folding_pass();

// Ops whose outputs are random (RandomNormal, RandomUniform, their *Like forms, Multinomial,
// Bernoulli): each run must draw anew, so they are never folded.
bool is_nondeterministic(const ir::Node& node);

}  // namespace kiln::passes
