// The line that names libgomp's wait settings in build logs and summaries.

#include "parallel/openmp_wait.h"

#include <gtest/gtest.h>

namespace kiln::parallel {
namespace {

TEST(OpenmpWait, DescribesWhatIsSet) {
  EXPECT_EQ(describe_openmp_wait("", ""), "libgomp's default");
  EXPECT_EQ(describe_openmp_wait("passive", ""), "OMP_WAIT_POLICY=passive");
  EXPECT_EQ(describe_openmp_wait("", "10000"), "GOMP_SPINCOUNT=10000");
  EXPECT_EQ(describe_openmp_wait("active", "0"), "OMP_WAIT_POLICY=active GOMP_SPINCOUNT=0");
}

}  // namespace
}  // namespace kiln::parallel
