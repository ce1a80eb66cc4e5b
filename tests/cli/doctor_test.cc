// `kiln doctor` through the real binary: the kernel paths follow the ISA cap, and a bad cap is an
// error naming the variable.
#include <gtest/gtest.h>

#include "kiln_process.h"

namespace kiln {
namespace doctor_test {

TEST(KilnDoctor, NamesTheKernelPathsOfTheCappedIsa) {
  const auto scalar = testing::run_kiln_env("KILN_MAX_ISA=sse4_2", "doctor");
  ASSERT_EQ(scalar.exit_code, 0) << scalar.out;
  EXPECT_NE(scalar.out.find("(KILN_MAX_ISA=sse4_2)"), std::string::npos) << scalar.out;
  EXPECT_NE(scalar.out.find("INT8: portable kernels"), std::string::npos) << scalar.out;
  EXPECT_NE(scalar.out.find("FP32: kiln's portable kernels"), std::string::npos) << scalar.out;
  EXPECT_NE(scalar.out.find("Threads: "), std::string::npos) << scalar.out;

  const auto avx2 = testing::run_kiln_env("KILN_MAX_ISA=avx2", "doctor");
  ASSERT_EQ(avx2.exit_code, 0) << avx2.out;
  EXPECT_NE(avx2.out.find("INT8: AVX2 without VNNI"), std::string::npos) << avx2.out;
  EXPECT_NE(avx2.out.find("FP32: kiln's AVX2+FMA kernels"), std::string::npos) << avx2.out;
  EXPECT_NE(avx2.out.find("FP16: F16C converts"), std::string::npos) << avx2.out;

  // Below AMX, VNNI is the INT8 path named (on a host with VNNI).
  const auto vnni = testing::run_kiln_env("KILN_MAX_ISA=avx512_vnni", "doctor");
  ASSERT_EQ(vnni.exit_code, 0) << vnni.out;
  EXPECT_EQ(vnni.out.find("AMX-INT8"), std::string::npos) << vnni.out;
}

TEST(KilnDoctor, RefusesAnUnknownIsaCap) {
  const auto r = testing::run_kiln_env("KILN_MAX_ISA=avx9000", "doctor");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("KILN_MAX_ISA"), std::string::npos) << r.out;
}

}  // namespace doctor_test
}  // namespace kiln
