#include "report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "report/svg.h"

namespace kiln::cli::report {
namespace {

constexpr double kWidth = 720;  // fits an A4 page's text width at 96 px per inch
constexpr double kFont = 11;
constexpr double kTitleFont = 13;
constexpr double kLegendRow = 18;
constexpr const char* kGrid = "#e3e3e3";
constexpr const char* kAxis = "#555";

struct LegendLayout {
  std::vector<std::pair<double, double>> at;  // each item's swatch position
  double height = 0;
};

// Items left to right, wrapping at `width`; nothing for a single series.
LegendLayout legend_layout(const std::vector<std::string>& names, double x0, double y0,
                           double width) {
  LegendLayout l;
  if (names.size() < 2) return l;
  double x = x0, y = y0;
  for (const std::string& n : names) {
    const double w = 16 + text_width(n, kFont) + 18;
    if (x > x0 && x + w > x0 + width) {
      x = x0;
      y += kLegendRow;
    }
    l.at.emplace_back(x, y);
    x += w;
  }
  l.height = y - y0 + kLegendRow;
  return l;
}

void draw_legend(SvgWriter& svg, const std::vector<std::string>& names, const LegendLayout& l,
                 bool lines) {
  for (size_t i = 0; i < l.at.size(); ++i) {
    const auto [x, y] = l.at[i];
    if (lines) {
      svg.line(x, y + 6, x + 12, y + 6, series_color(i), 2.5, "legend-swatch");
    } else {
      svg.rect(x, y, 12, 12, series_color(i), "legend-swatch");
    }
    svg.text(x + 16, y + 10, names[i], {.size = kFont, .css_class = "legend"});
  }
}

void draw_title(SvgWriter& svg, const std::string& title) {
  svg.text(12, 20, title, {.size = kTitleFont, .bold = true, .css_class = "chart-title"});
}

// Horizontal grid lines and labels at the y ticks, the y axis line and its rotated label.
void draw_y_axis(SvgWriter& svg, const Ticks& ticks, const LinearScale& y, double left,
                 double right, const std::string& label) {
  for (double v : ticks.values) {
    svg.line(left, y(v), right, y(v), kGrid, 1, "grid");
    svg.text(left - 6, y(v) + 4, tick_label(v, ticks.step),
             {.anchor = Anchor::kEnd, .size = kFont, .fill = kAxis, .css_class = "tick"});
  }
  svg.line(left, y(ticks.lo), left, y(ticks.hi), kAxis, 1, "axis");
  const double mid = (y(ticks.lo) + y(ticks.hi)) / 2;
  svg.text(14, mid, label,
           {.anchor = Anchor::kMiddle,
            .size = kFont,
            .fill = kAxis,
            .rotate = -90,
            .css_class = "axis-label"});
}

// The top of the value axis: the tallest bar, and whiskers up to kWhiskerRoom times it; a longer
// whisker (one slow query's p99) is cut at the top and labelled, so it does not flatten the bars.
constexpr double kWhiskerRoom = 2.5;

double bar_axis_top(const BarChart& c) {
  double bars = 0, whiskers = 0;
  for (const BarSeries& s : c.series) {
    for (const auto& v : s.values) {
      if (!v) continue;
      bars = std::max(bars, v->value);
      whiskers = std::max(whiskers, v->whisker.value_or(0));
    }
  }
  if (bars <= 0) return whiskers;
  return std::max(bars, std::min(whiskers, kWhiskerRoom * bars));
}

std::vector<std::string> series_names(const std::vector<BarSeries>& s) {
  std::vector<std::string> n;
  for (const BarSeries& x : s) n.push_back(x.name);
  return n;
}

std::vector<std::string> series_names(const std::vector<LineSeries>& s) {
  std::vector<std::string> n;
  for (const LineSeries& x : s) n.push_back(x.name);
  return n;
}

void draw_bar(SvgWriter& svg, const BarValue& v, const LinearScale& y, double axis_top, double x,
              double w, size_t series) {
  const double top = y(v.value);
  svg.rect(x, top, w, y(0) - top, series_color(series), "bar", v.tooltip);
  if (!v.whisker || *v.whisker <= v.value) return;
  const double cx = x + w / 2, cap = std::min(w / 4, 5.0);
  if (*v.whisker <= axis_top) {
    const double wy = y(*v.whisker);
    svg.line(cx, top, cx, wy, "#222", 1.2, "whisker");
    svg.line(cx - cap, wy, cx + cap, wy, "#222", 1.2, "whisker");
    return;
  }
  // Off the axis: a dashed stem to the top and the value written there.
  const double wy = y(axis_top);
  svg.line(cx, top, cx, wy, "#222", 1.2, "whisker", "3 2");
  const double digits = std::pow(10.0, std::floor(std::log10(*v.whisker)) - 2);  // 3 significant
  svg.text(cx + 3, wy + 9, tick_label(*v.whisker, digits) + "\u2191",
           {.size = 9, .fill = "#222", .css_class = "whisker-label"});
}

}  // namespace

const char* series_color(size_t i) {
  static constexpr std::array<const char*, 10> kPalette = {
      "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7",
      "#56B4E9", "#000000", "#8C6D31", "#7F7F7F", "#B5B5B5"};
  return kPalette[i % kPalette.size()];
}

std::string render_bar_chart(const BarChart& c) {
  const double left = 64, right = kWidth - 16;
  const std::vector<std::string> names = series_names(c.series);
  const LegendLayout legend = legend_layout(names, left, 32, right - left);
  const double top = 36 + legend.height + 8, plot_h = 220;
  const double height = top + plot_h + 48;
  SvgWriter svg(kWidth, height, c.title, "chart bar-chart");
  draw_title(svg, c.title);
  draw_legend(svg, names, legend, false);
  const Ticks ticks = nice_ticks(0, bar_axis_top(c));
  const LinearScale y(ticks.lo, ticks.hi, top + plot_h, top);
  draw_y_axis(svg, ticks, y, left, right, c.y_label);
  const double band =
      (right - left) / static_cast<double>(std::max<size_t>(c.categories.size(), 1));
  const double bar_w =
      std::min(band * 0.8 / static_cast<double>(std::max<size_t>(c.series.size(), 1)), 56.0);
  for (size_t ci = 0; ci < c.categories.size(); ++ci) {
    const double group_w = bar_w * static_cast<double>(c.series.size());
    const double x0 = left + band * (static_cast<double>(ci) + 0.5) - group_w / 2;
    for (size_t si = 0; si < c.series.size(); ++si) {
      const auto& v = ci < c.series[si].values.size() ? c.series[si].values[ci] : std::nullopt;
      if (v) draw_bar(svg, *v, y, ticks.hi, x0 + bar_w * static_cast<double>(si), bar_w * 0.92, si);
    }
    svg.text(left + band * (static_cast<double>(ci) + 0.5), top + plot_h + 16,
             ellipsize_front(c.categories[ci], static_cast<size_t>(band / (kFont * 0.6))),
             {.anchor = Anchor::kMiddle,
              .size = kFont,
              .css_class = "category",
              .tooltip = c.categories[ci]});
  }
  svg.line(left, y(0), right, y(0), kAxis, 1, "axis");
  svg.text((left + right) / 2, height - 10, c.category_label,
           {.anchor = Anchor::kMiddle, .size = kFont, .fill = kAxis, .css_class = "axis-label"});
  return svg.str();
}

std::string render_line_chart(const LineChart& c) {
  const double left = 64, right = kWidth - 24;
  const std::vector<std::string> names = series_names(c.series);
  const LegendLayout legend = legend_layout(names, left, 32, right - left);
  const double top = 36 + legend.height + 8, plot_h = 220, height = top + plot_h + 48;
  SvgWriter svg(kWidth, height, c.title, "chart line-chart");
  draw_title(svg, c.title);
  draw_legend(svg, names, legend, true);
  double y_max = 0, x_min = INFINITY, x_max = -INFINITY;
  for (const LineSeries& s : c.series) {
    for (const LinePoint& p : s.points) {
      y_max = std::max(y_max, p.y);
      x_min = std::min(x_min, p.x);
      x_max = std::max(x_max, p.x);
    }
  }
  for (double t : c.x_ticks) x_min = std::min(x_min, t), x_max = std::max(x_max, t);
  if (!std::isfinite(x_min)) x_min = x_max = 1;
  const Ticks ticks = nice_ticks(0, y_max);
  const LinearScale y(ticks.lo, ticks.hi, top + plot_h, top);
  draw_y_axis(svg, ticks, y, left, right, c.y_label);
  const double pad = 24;  // keeps the end points off the axes
  const LogScale lx(x_min, x_max, left + pad, right - pad);
  const LinearScale ly(x_min, x_max, left + pad, right - pad);
  const auto x = [&](double v) { return c.log_x ? lx(v) : ly(v); };
  for (double t : c.x_ticks) {
    svg.line(x(t), y(0), x(t), y(0) + 4, kAxis, 1, "tick-mark");
    svg.text(x(t), y(0) + 16, tick_label(t, 1),
             {.anchor = Anchor::kMiddle, .size = kFont, .fill = kAxis, .css_class = "tick"});
  }
  svg.line(left, y(0), right, y(0), kAxis, 1, "axis");
  for (size_t si = 0; si < c.series.size(); ++si) {
    std::vector<std::pair<double, double>> pts;
    for (const LinePoint& p : c.series[si].points) pts.emplace_back(x(p.x), y(p.y));
    if (pts.size() >= 2) svg.path(pts, series_color(si), 2.2, "series");
    for (size_t i = 0; i < pts.size(); ++i) {
      svg.circle(pts[i].first, pts[i].second, 3.5, series_color(si), "point",
                 c.series[si].points[i].tooltip);
    }
  }
  svg.text((left + right) / 2, height - 10, c.x_label,
           {.anchor = Anchor::kMiddle, .size = kFont, .fill = kAxis, .css_class = "axis-label"});
  return svg.str();
}

std::string render_hbar_chart(const HBarChart& c) {
  double label_w = 0;
  for (const HBar& b : c.bars) label_w = std::max(label_w, text_width(b.label, kFont));
  label_w = std::clamp(label_w, 60.0, 300.0);
  const size_t max_chars = static_cast<size_t>(label_w / (kFont * 0.6));
  double value_w = 0;  // room for the text after the longest bar
  for (const HBar& b : c.bars) value_w = std::max(value_w, text_width(b.value_text, kFont - 1));
  const double left = label_w + 20, right = kWidth - 16 - std::min(value_w + 6, 200.0);
  const double top = 36, row = 20;
  const double plot_h = row * static_cast<double>(c.bars.size());
  const double height = top + plot_h + 44 + (c.note.empty() ? 0 : 18);
  SvgWriter svg(kWidth, height, c.title, "chart hbar-chart");
  draw_title(svg, c.title);
  double max_v = 0;
  for (const HBar& b : c.bars) max_v = std::max(max_v, b.value);
  const Ticks ticks = nice_ticks(0, max_v);
  const LinearScale x(ticks.lo, ticks.hi, left, right);
  for (double v : ticks.values) {
    svg.line(x(v), top, x(v), top + plot_h, kGrid, 1, "grid");
    svg.text(x(v), top + plot_h + 16, tick_label(v, ticks.step),
             {.anchor = Anchor::kMiddle, .size = kFont, .fill = kAxis, .css_class = "tick"});
  }
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const HBar& b = c.bars[i];
    const double y0 = top + row * static_cast<double>(i);
    svg.text(left - 6, y0 + 14, ellipsize_front(b.label, max_chars),
             {.anchor = Anchor::kEnd, .size = kFont, .css_class = "bar-label", .tooltip = b.label});
    svg.rect(x(0), y0 + 3, x(b.value) - x(0), row - 6, b.muted ? "#b5b5b5" : c.color, "bar",
             b.tooltip);
    svg.text(x(b.value) + 4, y0 + 14, b.value_text, {.size = kFont - 1, .fill = kAxis});
  }
  svg.line(left, top, left, top + plot_h, kAxis, 1, "axis");
  svg.text((left + right) / 2, top + plot_h + 34, c.x_label,
           {.anchor = Anchor::kMiddle, .size = kFont, .fill = kAxis, .css_class = "axis-label"});
  if (!c.note.empty()) {
    svg.text(12, height - 8, c.note, {.size = kFont - 1, .fill = kAxis, .css_class = "note"});
  }
  return svg.str();
}

}  // namespace kiln::cli::report
