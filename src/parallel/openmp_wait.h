#pragma once
// libgomp, the OpenMP runtime Debian's oneDNN runs on, reads OMP_WAIT_POLICY once, when it is
// loaded (before main). Unset, its threads spin for a while after each parallel region; after a
// oneDNN layer that spin holds the core kiln's own pool needs for the next layer (ResNet-50 FP32
// on 2 threads: 92 ms with the default policy, 53 ms passive). Since the policy can only be chosen
// before libgomp loads, a program re-executes itself with it set.

#include <string>

namespace kiln::parallel {

// When OMP_WAIT_POLICY is unset or empty: sets it to "passive" and re-executes this program
// (/proc/self/exe) with the same arguments. Returns only when it did not re-execute: the policy
// was already set (a user's choice is kept) or exec failed (the program then runs as it is).
void reexec_with_passive_openmp_wait(char** argv);

// OMP_WAIT_POLICY as libgomp read it, lower-case; "" when unset.
std::string openmp_wait_policy();

}  // namespace kiln::parallel
