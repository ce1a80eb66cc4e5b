#include "report/trtexec_log.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <regex>

namespace kiln::cli::report {
namespace {

// trtexec prints numbers with a default std::ostream: "0", "1.2e-05", "inf", "nan".
#define KILN_NUM R"(([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan))"

std::optional<double> number(const std::string& text) {
  const double v = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

double number_or_zero(const std::string& text) { return number(text).value_or(0.0); }

struct Line {
  std::string text;      // without the "[date-time] [S] " prefix
  char severity = '?';   // I, W, E, V, F; '?' without a prefix
  std::string time_iso;  // "2024-10-03T10:47:59"; "" without a prefix
};

Line split_prefix(std::string raw) {
  static const std::regex prefix(
      R"(^\[(\d\d)/(\d\d)/(\d{4})-(\d\d):(\d\d):(\d\d)\] \[([IWEVF])\] ?)");
  if (!raw.empty() && raw.back() == '\r') raw.pop_back();
  std::smatch m;
  if (!std::regex_search(raw, m, prefix)) return {raw, '?', ""};
  Line line;
  line.severity = m[7].str()[0];
  line.time_iso = fmt::format("{}-{}-{}T{}:{}:{}", m[3].str(), m[1].str(), m[2].str(), m[4].str(),
                              m[5].str(), m[6].str());
  line.text = m.suffix().str();
  return line;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

void parse_banner(const std::string& text, TrtexecLog& log) {
  static const std::regex version(R"(\[TensorRT v(\d+)\])");
  std::smatch m;
  if (std::regex_search(text, m, version)) log.tensorrt_version = tensorrt_version_text(m[1].str());
  const size_t hash = text.find(" # ");
  if (hash == std::string::npos) return;
  std::vector<std::string> words = split_words(text.substr(hash + 3));
  if (!words.empty()) words.erase(words.begin());  // the program: trtexec, ./trtexec, a path
  log.command = std::move(words);
}

std::optional<TrtexecStats>* metric_slot(TrtexecLog& log, const std::string& name) {
  if (name == "Latency") return &log.latency;
  if (name == "End-to-End Host Latency") return &log.end_to_end;
  if (name == "Enqueue Time") return &log.enqueue;
  if (name == "H2D Latency") return &log.h2d;
  if (name == "GPU Compute Time") return &log.compute;
  if (name == "D2H Latency") return &log.d2h;
  return nullptr;
}

// The 8.0+ summary lines. True when the line was one of them.
bool parse_summary_line(const std::string& text, TrtexecLog& log) {
  static const std::regex throughput("^Throughput: " KILN_NUM " qps$");
  static const std::regex metric(
      "^(Latency|End-to-End Host Latency|Enqueue Time|H2D Latency|GPU Compute Time|D2H "
      "Latency): min = " KILN_NUM " ms, max = " KILN_NUM " ms, mean = " KILN_NUM
      " ms, median = " KILN_NUM " ms((?:, percentile\\([^)]*\\) = [^,]* ms)*)$");
  static const std::regex percentile(", percentile\\(" KILN_NUM "%\\) = " KILN_NUM " ms");
  static const std::regex total("^Total (Host Walltime|GPU Compute Time): " KILN_NUM " s$");
  std::smatch m;
  if (std::regex_match(text, m, throughput)) {
    log.throughput_qps = number_or_zero(m[1].str());
    return true;
  }
  if (std::regex_match(text, m, metric)) {
    TrtexecStats s{
        number(m[2].str()), number(m[3].str()), number(m[4].str()), number(m[5].str()), {}};
    const std::string tail = m[6].str();
    for (std::sregex_iterator it(tail.begin(), tail.end(), percentile), end; it != end; ++it) {
      s.percentiles.push_back({number_or_zero((*it)[1].str()), number((*it)[2].str())});
    }
    *metric_slot(log, m[1].str()) = std::move(s);
    return true;
  }
  if (std::regex_match(text, m, total)) {
    (m[1].str() == "Host Walltime" ? log.host_walltime_s : log.compute_time_s) = number(m[2].str());
    return true;
  }
  return false;
}

// 7.x prints each metric as a block: a title line, then "min: X ms (end to end Y ms)", ...,
// "percentile: X ms at 99% (end to end Y ms at 99%)", and block totals.
class LegacyBlocks {
 public:
  explicit LegacyBlocks(TrtexecLog& log) : log_(log) {}

  bool parse(const std::string& text) {
    if (text == "Host Latency" || text == "Enqueue Time" || text == "GPU Compute") {
      block_ = text;
      if (text == "Host Latency") {
        log_.latency.emplace();
        log_.end_to_end.emplace();
      } else {
        (text == "GPU Compute" ? log_.compute : log_.enqueue).emplace();
      }
      return true;
    }
    if (block_.empty()) return false;
    if (parse_value(text) || parse_total(text)) return true;
    block_.clear();
    return false;
  }

 private:
  TrtexecStats& main_stats() {
    if (block_ == "GPU Compute") return *log_.compute;
    if (block_ == "Enqueue Time") return *log_.enqueue;
    return *log_.latency;
  }

  bool parse_value(const std::string& text) {
    static const std::regex value("^(min|max|mean|median): " KILN_NUM
                                  " ms(?: \\(end to end " KILN_NUM " ms\\))?$");
    static const std::regex pct("^percentile: " KILN_NUM " ms at " KILN_NUM
                                "%(?: \\(end to end " KILN_NUM " ms at " KILN_NUM "%\\))?$");
    std::smatch m;
    if (std::regex_match(text, m, value)) {
      set(main_stats(), m[1].str(), number(m[2].str()));
      if (m[3].matched && block_ == "Host Latency") {
        set(*log_.end_to_end, m[1].str(), number(m[3].str()));
      }
      return true;
    }
    if (std::regex_match(text, m, pct)) {
      main_stats().percentiles.push_back({number_or_zero(m[2].str()), number(m[1].str())});
      if (m[3].matched && block_ == "Host Latency") {
        log_.end_to_end->percentiles.push_back({number_or_zero(m[4].str()), number(m[3].str())});
      }
      return true;
    }
    return false;
  }

  bool parse_total(const std::string& text) {
    static const std::regex total("^(throughput|walltime|total compute time): " KILN_NUM
                                  " (qps|s)$");
    std::smatch m;
    if (!std::regex_match(text, m, total)) return false;
    const std::string what = m[1].str();
    if (what == "throughput") log_.throughput_qps = number_or_zero(m[2].str());
    if (what == "walltime") log_.host_walltime_s = number(m[2].str());
    if (what == "total compute time") log_.compute_time_s = number(m[2].str());
    return true;
  }

  static void set(TrtexecStats& s, const std::string& key, std::optional<double> v) {
    (key == "min" ? s.min : key == "max" ? s.max : key == "mean" ? s.mean : s.median) = v;
  }

  TrtexecLog& log_;
  std::string block_;
};

// Lines every version prints around the run: device, warm-up, trace size, build and load times.
void parse_run_facts(const std::string& text, TrtexecLog& log) {
  static const std::regex warmup("^Warmup completed (\\d+) queries over " KILN_NUM " ms$");
  static const std::regex trace("^Timing trace has (\\d+) queries over " KILN_NUM " s$");
  static const std::regex built("^Engine built in " KILN_NUM " sec\\.?$");
  static const std::regex loaded("^Engine deserialized in " KILN_NUM " sec\\.?$");
  std::smatch m;
  if (text.rfind("Selected Device: ", 0) == 0) {
    log.device = text.substr(17);
  } else if (std::regex_match(text, m, warmup)) {
    log.warmup_queries = std::stoll(m[1].str());
    log.warmup_ms = number(m[2].str());
  } else if (std::regex_match(text, m, trace)) {
    log.queries = std::stoll(m[1].str());
  } else if (std::regex_match(text, m, built)) {
    log.build_s = number(m[1].str());
  } else if (std::regex_match(text, m, loaded)) {
    log.load_s = number(m[1].str());
  }
}

void parse_warning(const std::string& text, TrtexecLog& log) {
  static const std::regex cov("coefficient of variance = " KILN_NUM "%");
  if (text.rfind("* ", 0) == 0) {
    log.warnings.push_back(text.substr(2));
  } else if (text.rfind("  ", 0) == 0 && !log.warnings.empty()) {
    log.warnings.back() += " " + text.substr(text.find_first_not_of(' '));
  } else {
    return;
  }
  std::smatch m;
  if (std::regex_search(text, m, cov)) log.compute_cov_percent = number(m[1].str());
}

Status check_complete(const TrtexecLog& log, std::string_view name) {
  if (!log.throughput_qps && !log.latency && !log.compute) {
    return invalid_argument(
        "{}: no performance summary: neither TensorRT 8+'s '=== Performance summary ===' block "
        "nor 7.x's 'Host Latency' block{}",
        name, log.failed ? " (the run failed: '&&&& FAILED')" : " (was the run cut short?)");
  }
  for (const auto& [present, what] : {std::pair{log.throughput_qps.has_value(), "Throughput"},
                                      std::pair{log.latency.has_value(), "Latency"},
                                      std::pair{log.compute.has_value(), "GPU Compute Time"}}) {
    if (!present) {
      return invalid_argument("{}: the performance summary has no '{}' line", name, what);
    }
  }
  return Status::ok();
}

}  // namespace

std::string tensorrt_version_text(std::string_view encoded) {
  int64_t v = 0;
  for (char c : encoded) {
    if (c < '0' || c > '9') return std::string(encoded);
    v = v * 10 + (c - '0');
  }
  if (v >= 100000) return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  if (v >= 1000) return fmt::format("{}.{}.{}", v / 1000, v / 100 % 10, v % 100);
  return std::string(encoded);
}

Result<TrtexecLog> parse_trtexec_log(std::string_view text, std::string_view name) {
  TrtexecLog log;
  LegacyBlocks legacy(log);
  bool in_summary = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const Line line = split_prefix(std::string(text.substr(pos, end - pos)));
    pos = end + 1;
    if (log.started_at.empty()) log.started_at = line.time_iso;
    if (line.text.rfind("&&&& RUNNING ", 0) == 0) parse_banner(line.text, log);
    if (line.text.rfind("&&&& FAILED", 0) == 0) log.failed = true;
    if (line.text == "=== Performance summary ===") {
      in_summary = true;
      log.format = "summary";
      continue;
    }
    if (in_summary && parse_summary_line(line.text, log)) continue;
    if (in_summary && line.severity == 'W') parse_warning(line.text, log);
    if (!in_summary && legacy.parse(line.text)) {
      log.format = "legacy";
      continue;
    }
    parse_run_facts(line.text, log);
  }
  KILN_RETURN_IF_ERROR(check_complete(log, name));
  return log;
}

}  // namespace kiln::cli::report
