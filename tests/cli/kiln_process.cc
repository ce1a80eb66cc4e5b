#include "kiln_process.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kiln::testing {

KilnRun run_kiln(const std::string& args) { return run_kiln_env("", args); }

KilnRun run_kiln_env(const std::string& env, const std::string& args) {
  const std::string cmd =
      (env.empty() ? "" : "env " + env + " ") + std::string(KILN_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

void expect_out(const KilnRun& r, int code, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, code) << r.out;
  for (const std::string& p : parts) {
    EXPECT_NE(r.out.find(p), std::string::npos) << "'" << p << "' not in:\n" << r.out;
  }
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kiln::testing
