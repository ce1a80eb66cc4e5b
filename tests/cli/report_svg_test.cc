// kiln report's SVG writer and charts: nice ticks, scales, escaping of names with <>&"', and
// charts that are well-formed, non-empty and free of "nan" whatever the numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "report/charts.h"
#include "report/svg.h"

namespace kiln::cli::report {
namespace report_svg_test {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every '<' opens a tag and every '&' starts one of the five entities: no raw name leaked.
void expect_well_escaped(const std::string& svg) {
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  for (size_t at = svg.find('&'); at != std::string::npos; at = svg.find('&', at + 1)) {
    const std::string rest = svg.substr(at, 6);
    EXPECT_TRUE(rest.rfind("&amp;", 0) == 0 || rest.rfind("&lt;", 0) == 0 ||
                rest.rfind("&gt;", 0) == 0 || rest.rfind("&quot;", 0) == 0 ||
                rest.rfind("&#39;", 0) == 0)
        << rest;
  }
  const std::string lower = [&] {
    std::string s = svg;
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }();
  EXPECT_EQ(lower.find("nan"), std::string::npos);
  EXPECT_EQ(lower.find("inf\""), std::string::npos);
}

TEST(ReportSvg, NiceNumbers) {
  EXPECT_DOUBLE_EQ(nice_number(0.7, false), 1);
  EXPECT_DOUBLE_EQ(nice_number(1.3, false), 2);
  EXPECT_DOUBLE_EQ(nice_number(3.2, false), 5);
  EXPECT_DOUBLE_EQ(nice_number(7, false), 10);
  EXPECT_DOUBLE_EQ(nice_number(1.3, true), 1);
  EXPECT_DOUBLE_EQ(nice_number(2.4, true), 2);
  EXPECT_DOUBLE_EQ(nice_number(4, true), 5);
  EXPECT_DOUBLE_EQ(nice_number(8, true), 10);
  EXPECT_NEAR(nice_number(0.031, true), 0.05, 1e-12);  // 3.1 rounds to 5 (Heckbert: < 3 is 2)
  EXPECT_NEAR(nice_number(0.025, true), 0.02, 1e-12);
  EXPECT_NEAR(nice_number(4200, false), 5000, 1e-9);
}

TEST(ReportSvg, NiceTicksCoverTheRangeInWholeSteps) {
  const Ticks t = nice_ticks(0, 259.5);
  EXPECT_DOUBLE_EQ(t.lo, 0);
  EXPECT_DOUBLE_EQ(t.step, 50);
  EXPECT_DOUBLE_EQ(t.hi, 300);
  EXPECT_EQ(t.values, (std::vector<double>{0, 50, 100, 150, 200, 250, 300}));
  const Ticks small = nice_ticks(0, 0.0123);
  EXPECT_NEAR(small.step, 0.002, 1e-15);
  EXPECT_GE(small.hi, 0.0123);
  EXPECT_LE(small.values.size(), 8u);
  const Ticks neg = nice_ticks(-3, 7);
  EXPECT_DOUBLE_EQ(neg.lo, -4);
  EXPECT_DOUBLE_EQ(neg.hi, 8);
  for (double lo : {0.0, 1.0, 17.0}) {
    for (double hi : {1.5, 99.0, 12345.0, 1e7}) {
      const Ticks x = nice_ticks(lo, hi);
      EXPECT_LE(x.lo, lo);
      EXPECT_GE(x.hi, hi);
      EXPECT_GE(x.values.size(), 3u) << lo << " " << hi;
      EXPECT_LE(x.values.size(), 12u) << lo << " " << hi;
    }
  }
}

TEST(ReportSvg, DegenerateRangesStillMakeAnAxis) {
  const Ticks zero = nice_ticks(0, 0);
  EXPECT_DOUBLE_EQ(zero.lo, 0);
  EXPECT_DOUBLE_EQ(zero.hi, 1);
  const Ticks one = nice_ticks(42, 42);
  EXPECT_DOUBLE_EQ(one.lo, 0);
  EXPECT_GE(one.hi, 42);
  const Ticks bad = nice_ticks(std::numeric_limits<double>::quiet_NaN(), INFINITY);
  EXPECT_DOUBLE_EQ(bad.lo, 0);
  EXPECT_DOUBLE_EQ(bad.hi, 1);
  const Ticks reversed = nice_ticks(10, 0);
  EXPECT_DOUBLE_EQ(reversed.lo, 0);
  EXPECT_DOUBLE_EQ(reversed.hi, 10);
}

TEST(ReportSvg, TickLabels) {
  EXPECT_EQ(tick_label(150, 50), "150");
  EXPECT_EQ(tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(tick_label(0.3 * 3, 0.1), "0.9");  // no 0.8999999
  EXPECT_EQ(tick_label(-1e-17, 0.1), "0.0");   // no "-0.0"
  EXPECT_EQ(tick_label(15000, 5000), "15k");
  EXPECT_EQ(tick_label(2500000, 500000), "2.5M");
  EXPECT_EQ(tick_label(12000, 200), "12000");  // the step needs the digits
  EXPECT_EQ(tick_label(NAN, 1), "");
}

TEST(ReportSvg, Scales) {
  const LinearScale y(0, 300, 260, 40);  // SVG's y grows downwards
  EXPECT_DOUBLE_EQ(y(0), 260);
  EXPECT_DOUBLE_EQ(y(300), 40);
  EXPECT_DOUBLE_EQ(y(150), 150);
  const LinearScale flat(5, 5, 0, 100);
  EXPECT_DOUBLE_EQ(flat(5), 50);
  const LogScale x(1, 16, 0, 400);
  EXPECT_DOUBLE_EQ(x(1), 0);
  EXPECT_NEAR(x(4), 200, 1e-9);
  EXPECT_NEAR(x(16), 400, 1e-9);
  EXPECT_DOUBLE_EQ(x(0), 0);  // outside the log domain: the start, not nan
  EXPECT_DOUBLE_EQ(LogScale(8, 8, 0, 100)(8), 50);
}

TEST(ReportSvg, EscapesText) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(xml_escape("tab\tok\x01"), "tab\tok ");
  SvgWriter svg(100, 50, "<title> & \"x\"", "chart");
  svg.text(1, 2, "</text><script>alert(1)</script>", {.tooltip = "a&b"});
  svg.rect(0, 0, 10, 10, "#123", "bar", "<evil>");
  const std::string s = svg.str();
  EXPECT_NE(s.find("&lt;/text&gt;&lt;script&gt;"), std::string::npos);
  EXPECT_NE(s.find("<title>&lt;evil&gt;</title>"), std::string::npos);
  expect_well_escaped(s);
}

TEST(ReportSvg, NumbersAreFiniteAndShort) {
  EXPECT_EQ(svg_number(NAN), "0");
  EXPECT_EQ(svg_number(INFINITY), "0");
  EXPECT_EQ(svg_number(12.0), "12");
  EXPECT_EQ(svg_number(12.345), "12.3");
  EXPECT_EQ(svg_number(-0.01), "0");
  SvgWriter svg(10, 10, "t", "");
  svg.rect(NAN, 1, -5, INFINITY, "#000");
  EXPECT_NE(svg.str().find("x=\"0\" y=\"1\" width=\"0\" height=\"0\""), std::string::npos);
}

TEST(ReportSvg, EllipsizeKeepsTheEnd) {
  EXPECT_EQ(ellipsize_front("/layer1/conv", 40), "/layer1/conv");
  EXPECT_EQ(ellipsize_front("/layer4/layer4.1/conv2/Conv", 11), "\u2026conv2/Conv");
  EXPECT_EQ(ellipsize_front("\u00e9\u00e9\u00e9\u00e9", 3), "\u2026\u00e9\u00e9");
  EXPECT_DOUBLE_EQ(text_width("\u00e9\u00e9", 10), 12);
}

TEST(ReportCharts, BarChartHasBarsWhiskersAxesAndLegend) {
  BarChart c{"resnet50 <b>: latency", "ms", "batch", {"batch 1", "batch 8"}, {}};
  c.series.push_back({"kiln & co", {BarValue{10, 12, "t"}, BarValue{70, 90, "t"}}});
  c.series.push_back({"onnxruntime \"1.30\"", {BarValue{12, std::nullopt, ""}, std::nullopt}});
  const std::string s = render_bar_chart(c);
  EXPECT_EQ(count(s, "class=\"bar\""), 3u);
  EXPECT_EQ(count(s, "class=\"whisker\""), 4u);  // two bars with p99: a stem and a cap each
  EXPECT_EQ(count(s, "class=\"legend\""), 2u);
  EXPECT_GE(count(s, "class=\"tick\""), 3u);
  EXPECT_NE(s.find("kiln &amp; co"), std::string::npos);
  EXPECT_NE(s.find("onnxruntime &quot;1.30&quot;"), std::string::npos);
  EXPECT_NE(s.find("resnet50 &lt;b&gt;: latency"), std::string::npos);
  expect_well_escaped(s);
}

TEST(ReportCharts, AFarWhiskerIsCutAndLabelledNotFlatteningTheBars) {
  BarChart c{"t", "ms", "batch", {"b1"}, {}};
  c.series.push_back({"a", {BarValue{10, 12, ""}}});
  c.series.push_back({"b", {BarValue{20, 1995, ""}}});  // one slow query
  const std::string s = render_bar_chart(c);
  EXPECT_NE(s.find(">1995\u2191</text>"), std::string::npos) << s;
  EXPECT_NE(s.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(s.find(">50</text>"), std::string::npos);  // the axis ends at 50 (2.5 x 20)
  EXPECT_EQ(s.find(">2000</text>"), std::string::npos);
  expect_well_escaped(s);
}

TEST(ReportCharts, LineChartDrawsOneSeriesPerLineAndSinglePoints) {
  LineChart c;
  c.title = "throughput";
  c.x_ticks = {1, 2, 4};
  c.series.push_back({"kiln fp32", {{1, 10, ""}, {2, 18, ""}, {4, 30, ""}}});
  c.series.push_back({"pytorch fp32", {{1, 8, "<x>"}}});
  const std::string s = render_line_chart(c);
  EXPECT_EQ(count(s, "class=\"series\""), 1u);  // a single point draws no line
  EXPECT_EQ(count(s, "class=\"point\""), 4u);
  expect_well_escaped(s);
  LineChart one;
  one.title = "one batch";
  one.x_ticks = {8};
  one.series.push_back({"a", {{8, 5, ""}}});
  expect_well_escaped(render_line_chart(one));  // zero-width x domain: no nan
}

TEST(ReportCharts, HorizontalBarsLabelLongNamesAndZeroValues) {
  HBarChart c;
  c.title = "layers";
  c.bars = {{"/very/long/name/of/a/layer/that/goes/on/and/on/and/on/forever/Conv", 3, "3 ms", ""},
            {"<fused> & \"odd\"", 0, "0 ms", ""},
            {"other 5 layers", 1, "1 ms", "", true}};
  c.note = "from a & b";
  const std::string s = render_hbar_chart(c);
  EXPECT_EQ(count(s, "class=\"bar\""), 3u);
  EXPECT_NE(s.find("\u2026"), std::string::npos);   // the long label is cut, the end kept
  EXPECT_NE(s.find("#b5b5b5"), std::string::npos);  // the grouped rest is grey
  expect_well_escaped(s);
  HBarChart all_zero;
  all_zero.title = "zeros";
  all_zero.bars = {{"a", 0, "0", ""}};
  expect_well_escaped(render_hbar_chart(all_zero));
}

}  // namespace report_svg_test
}  // namespace kiln::cli::report
