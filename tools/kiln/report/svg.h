#pragma once
// A small SVG writer for kiln report's charts: elements with escaped text and coordinates that are
// always finite numbers, linear and logarithmic scales, and axis ticks at "nice" numbers (1, 2 or
// 5 times a power of ten: the step is the nice number nearest range / target, after Heckbert). The output is plain SVG 1.1 with inline attributes: no
// script, no external font or stylesheet, so it renders the same inline in HTML, as a file, and
// on paper.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::cli::report {

// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(std::string_view text);

// The nice number (1, 2, 5 or 10 times a power of ten) closest to x (round) or the smallest one
// at least x (!round). x > 0.
double nice_number(double x, bool round);

struct Ticks {
  double lo = 0, hi = 1, step = 1;  // the axis range, widened to whole steps
  std::vector<double> values;       // lo, lo + step, ..., hi
};

// Ticks covering [lo, hi] with about `target` intervals. A zero-width range is widened around its
// value; non-finite inputs give the [0, 1] axis.
Ticks nice_ticks(double lo, double hi, int target = 5);

// A tick's label: as many decimals as the step needs ("0.25", "100"), thousands as "1.5k"/"2M"
// when the step allows, never "-0", "nan" or "inf".
std::string tick_label(double value, double step);

// Maps [d0, d1] onto [r0, r1].
class LinearScale {
 public:
  LinearScale(double d0, double d1, double r0, double r1) : d0_(d0), d1_(d1), r0_(r0), r1_(r1) {}
  double operator()(double v) const;

 private:
  double d0_, d1_, r0_, r1_;
};

// Maps [d0, d1] (both > 0) onto [r0, r1] by log(v); values <= 0 go to r0.
class LogScale {
 public:
  LogScale(double d0, double d1, double r0, double r1) : d0_(d0), d1_(d1), r0_(r0), r1_(r1) {}
  double operator()(double v) const;

 private:
  double d0_, d1_, r0_, r1_;
};

// Approximate width of `text` in a sans-serif font of `size` px (for layout; no font metrics).
double text_width(std::string_view text, double size);

// At most `max_chars` characters of `text` (UTF-8 aware), the end kept: "…layer4.1/conv2/Conv".
std::string ellipsize_front(std::string_view text, size_t max_chars);

enum class Anchor { kStart, kMiddle, kEnd };

struct TextStyle {
  Anchor anchor = Anchor::kStart;
  double size = 11;
  bool bold = false;
  std::string fill = "#222";
  double rotate = 0;      // degrees, around (x, y)
  std::string css_class;  // optional class attribute
  std::string tooltip;    // optional <title> child
};

class SvgWriter {
 public:
  // `title` becomes the SVG's <title> (what a screen reader and a hover say).
  SvgWriter(double width, double height, std::string_view title, std::string_view css_class);

  void rect(double x, double y, double w, double h, std::string_view fill,
            std::string_view css_class = "", std::string_view tooltip = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view css_class = "", std::string_view dash = "");
  // An open polyline through `points`.
  void path(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
            double width, std::string_view css_class = "");
  void circle(double cx, double cy, double r, std::string_view fill,
              std::string_view css_class = "", std::string_view tooltip = "");
  void text(double x, double y, std::string_view text, const TextStyle& style = {});

  double width() const { return width_; }
  double height() const { return height_; }
  // The complete <svg> element.
  std::string str() const;

 private:
  double width_, height_;
  std::string head_, body_;
};

// A coordinate as SVG text: one decimal, "0" for non-finite input (never "nan").
std::string svg_number(double v);

}  // namespace kiln::cli::report
