#pragma once
// Measured tactic times kept between builds, as TensorRT's timing cache: the key is a layer's
// signature (op, attributes, input and output dtypes and dims at the tuning shapes, which inputs
// are constant, the thread count) and the tactic's name; the value is its median time. A cache is
// only valid for the machine and the kiln that measured it: one from another CPU, ISA cap, kiln
// version or way of timing (tuner/cold_cache.h) loads as empty, with a note saying why, instead of
// steering the build with wrong times.
//
// File format (JSON, written atomically):
//   {"format": "kiln-timing-cache", "version": 1,
//    "machine": "<cpu brand> | <features> | kiln <v> | <how the times were taken>",
//    "layers": {"<layer signature>": {"<tactic>": <ms>, ...}, ...}}

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::tuner {

class TimingCache {
 public:
  // `machine` identifies the CPU, ISA cap and kiln version the times belong to.
  explicit TimingCache(std::string machine) : machine_(std::move(machine)) {}

  // A missing file is an empty cache; an unreadable or malformed one is an error naming the file;
  // one from another machine is empty and `note` says so.
  static Result<TimingCache> load(const std::filesystem::path& path, std::string machine,
                                  std::string* note);
  Status save(const std::filesystem::path& path) const;

  std::optional<double> find(std::string_view layer, std::string_view tactic) const;
  void add(const std::string& layer, const std::string& tactic, double ms);

  const std::string& machine() const { return machine_; }
  size_t size() const;

 private:
  std::string machine_;
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> layers_;
};

// The identity of this machine for timing purposes: CPU brand, usable features (after
// KILN_MAX_ISA) and kiln version.
std::string timing_machine_id(std::string_view kiln_version);

}  // namespace kiln::tuner
