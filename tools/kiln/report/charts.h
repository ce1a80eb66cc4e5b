#pragma once
// Three chart kinds, each rendered to one self-contained <svg> by SvgWriter: grouped vertical bars
// with optional whiskers (latency: p50 bar, p99 whisker), lines over a logarithmic or linear x
// axis (throughput against batch), and horizontal bars with labels (per-layer time and error).
// Every chart has a title, axes with nice-number ticks and labels, and a legend when it has more
// than one series. Bars carry class "bar", lines "series", points "point" (the tests count them).

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli::report {

// The colour of series `i`: Okabe and Ito's colour-blind-safe palette, then greys.
const char* series_color(size_t i);

struct BarValue {
  double value = 0;
  std::optional<double> whisker;  // drawn from the bar's top to this value
  std::string tooltip;
};

struct BarSeries {
  std::string name;
  std::vector<std::optional<BarValue>> values;  // one per category; nullopt: no bar
};

struct BarChart {
  std::string title, y_label, category_label;
  std::vector<std::string> categories;
  std::vector<BarSeries> series;
};

struct LinePoint {
  double x = 0, y = 0;
  std::string tooltip;
};

struct LineSeries {
  std::string name;
  std::vector<LinePoint> points;  // in x order
};

struct LineChart {
  std::string title, x_label, y_label;
  std::vector<LineSeries> series;
  bool log_x = true;            // x > 0 on a log scale (batch sizes)
  std::vector<double> x_ticks;  // where the x labels go (e.g. the batch sizes run)
};

struct HBar {
  std::string label;
  double value = 0;
  std::string value_text;  // printed after the bar
  std::string tooltip;
  bool muted = false;  // drawn grey ("other layers")
};

struct HBarChart {
  std::string title, x_label, note;
  std::vector<HBar> bars;
  std::string color = "#0072B2";
};

std::string render_bar_chart(const BarChart& chart);
std::string render_line_chart(const LineChart& chart);
std::string render_hbar_chart(const HBarChart& chart);

}  // namespace kiln::cli::report
