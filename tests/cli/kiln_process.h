#pragma once
// Runs the real `kiln` binary as a user would, for the CLI tests.

#include <filesystem>
#include <string>
#include <vector>

namespace kiln::testing {

struct KilnRun {
  int exit_code;    // a crash by signal s is 128 + s, as a shell reports it
  std::string out;  // stdout and stderr, interleaved
};

// Runs `kiln <args>` (args go through the shell).
KilnRun run_kiln(const std::string& args);
// The same with environment assignments first ("KILN_MAX_ISA=avx2 X=1"), as `env` takes them.
KilnRun run_kiln_env(const std::string& env, const std::string& args);

// Expects exit code `code` and every one of `parts` in the output (which a failure prints).
void expect_out(const KilnRun& r, int code, const std::vector<std::string>& parts);

// The whole file as text ("" when it cannot be read).
std::string read_text(const std::filesystem::path& path);

}  // namespace kiln::testing
