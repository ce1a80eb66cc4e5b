#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kiln::cli::report {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text; a name never needs them.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += ' ';
        } else {
          out += c;
        }
    }
  }
  return out;
}

double nice_number(double x, bool round) {
  const double exponent = std::floor(std::log10(x));
  const double fraction = x / std::pow(10.0, exponent);
  double nice;
  if (round) {
    nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
  } else {
    nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  }
  return nice * std::pow(10.0, exponent);
}

Ticks nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return nice_ticks(0, 1, target);
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= std::abs(hi) * 1e-12) {
    // One value: an axis from 0 (or the value's double) that shows it.
    if (hi == 0) return nice_ticks(0, 1, target);
    if (hi > 0) {
      lo = 0;
    } else {
      hi = 0;
    }
  }
  Ticks t;
  t.step = nice_number((hi - lo) / std::max(target, 1), true);
  t.lo = std::floor(lo / t.step + 1e-9) * t.step;
  t.hi = std::ceil(hi / t.step - 1e-9) * t.step;
  const int n = static_cast<int>(std::lround((t.hi - t.lo) / t.step));
  for (int i = 0; i <= n; ++i) t.values.push_back(t.lo + i * t.step);
  return t;
}

std::string tick_label(double value, double step) {
  if (!std::isfinite(value)) return "";
  if (!std::isfinite(step) || step <= 0) step = std::max(std::abs(value), 1.0);
  if (std::abs(value) < step * 1e-9) value = 0;
  const char* suffix = "";
  double scale = 1;
  if (std::abs(value) >= 1e6 && step >= 1e5) {
    suffix = "M";
    scale = 1e6;
  } else if (std::abs(value) >= 1e4 && step >= 1e3) {
    suffix = "k";
    scale = 1e3;
  }
  const double s = step / scale;
  const int decimals = std::clamp(static_cast<int>(-std::floor(std::log10(s) + 1e-9)), 0, 9);
  std::string text = fmt::format("{:.{}f}{}", value / scale, decimals, suffix);
  if (text.rfind("-0", 0) == 0 && text.find_first_not_of("-0.") == std::string::npos) {
    text.erase(0, 1);
  }
  return text;
}

double LinearScale::operator()(double v) const {
  if (d1_ == d0_) return (r0_ + r1_) / 2;
  return r0_ + (v - d0_) / (d1_ - d0_) * (r1_ - r0_);
}

double LogScale::operator()(double v) const {
  if (v <= 0 || d0_ <= 0 || d1_ <= 0) return r0_;
  if (d1_ == d0_) return (r0_ + r1_) / 2;
  return r0_ + std::log(v / d0_) / std::log(d1_ / d0_) * (r1_ - r0_);
}

namespace {

size_t code_points(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string_view anchor_name(Anchor a) {
  switch (a) {
    case Anchor::kMiddle:
      return "middle";
    case Anchor::kEnd:
      return "end";
    default:
      return "start";
  }
}

std::string class_attr(std::string_view css_class) {
  return css_class.empty() ? "" : fmt::format(" class=\"{}\"", xml_escape(css_class));
}

// An element, closed at once or around a <title> child (the tooltip).
std::string element(std::string_view open, std::string_view tag, std::string_view tooltip) {
  if (tooltip.empty()) return fmt::format("{}/>\n", open);
  return fmt::format("{}><title>{}</title></{}>\n", open, xml_escape(tooltip), tag);
}

}  // namespace

double text_width(std::string_view text, double size) {
  return static_cast<double>(code_points(text)) * size * 0.6;
}

std::string ellipsize_front(std::string_view text, size_t max_chars) {
  if (max_chars == 0) return "";
  if (code_points(text) <= max_chars) return std::string(text);
  // Keep the last max_chars - 1 code points after an ellipsis.
  size_t keep = max_chars - 1;
  size_t i = text.size();
  while (i > 0 && keep > 0) {
    --i;
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) --keep;
  }
  return "\u2026" + std::string(text.substr(i));
}

std::string svg_number(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = fmt::format("{:.1f}", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  if (s == "-0") s = "0";
  return s;
}

SvgWriter::SvgWriter(double width, double height, std::string_view title,
                     std::string_view css_class)
    : width_(width), height_(height) {
  head_ = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\"{} width=\"{}\" height=\"{}\" "
      "viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\" "
      "font-family=\"DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif\">\n"
      "<title>{}</title>\n"
      // Opaque, so a chart stays readable on a dark page (a markdown viewer's dark theme).
      "<rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
      class_attr(css_class), svg_number(width), svg_number(height), svg_number(width),
      svg_number(height), xml_escape(title), xml_escape(title));
}

void SvgWriter::rect(double x, double y, double w, double h, std::string_view fill,
                     std::string_view css_class, std::string_view tooltip) {
  body_ += element(
      fmt::format("<rect{} x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"",
                  class_attr(css_class), svg_number(x), svg_number(y), svg_number(std::max(w, 0.0)),
                  svg_number(std::max(h, 0.0)), xml_escape(fill)),
      "rect", tooltip);
}

void SvgWriter::line(double x1, double y1, double x2, double y2, std::string_view stroke,
                     double width, std::string_view css_class, std::string_view dash) {
  body_ += fmt::format(
      "<line{} x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
      class_attr(css_class), svg_number(x1), svg_number(y1), svg_number(x2), svg_number(y2),
      xml_escape(stroke), svg_number(width),
      dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", xml_escape(dash)));
}

void SvgWriter::path(const std::vector<std::pair<double, double>>& points, std::string_view stroke,
                     double width, std::string_view css_class) {
  if (points.empty()) return;
  std::string d;
  for (size_t i = 0; i < points.size(); ++i) {
    d += fmt::format("{}{} {}", i == 0 ? "M" : " L", svg_number(points[i].first),
                     svg_number(points[i].second));
  }
  body_ += fmt::format(
      "<path{} d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" "
      "stroke-linejoin=\"round\"/>\n",
      class_attr(css_class), d, xml_escape(stroke), svg_number(width));
}

void SvgWriter::circle(double cx, double cy, double r, std::string_view fill,
                       std::string_view css_class, std::string_view tooltip) {
  body_ += element(
      fmt::format("<circle{} cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"", class_attr(css_class),
                  svg_number(cx), svg_number(cy), svg_number(r), xml_escape(fill)),
      "circle", tooltip);
}

void SvgWriter::text(double x, double y, std::string_view text, const TextStyle& s) {
  std::string attrs =
      fmt::format("{} x=\"{}\" y=\"{}\" font-size=\"{}\" fill=\"{}\"", class_attr(s.css_class),
                  svg_number(x), svg_number(y), svg_number(s.size), xml_escape(s.fill));
  if (s.anchor != Anchor::kStart)
    attrs += fmt::format(" text-anchor=\"{}\"", anchor_name(s.anchor));
  if (s.bold) attrs += " font-weight=\"bold\"";
  if (s.rotate != 0) {
    attrs += fmt::format(" transform=\"rotate({} {} {})\"", svg_number(s.rotate), svg_number(x),
                         svg_number(y));
  }
  const std::string title =
      s.tooltip.empty() ? "" : fmt::format("<title>{}</title>", xml_escape(s.tooltip));
  body_ += fmt::format("<text{}>{}{}</text>\n", attrs, title, xml_escape(text));
}

std::string SvgWriter::str() const { return head_ + body_ + "</svg>\n"; }

}  // namespace kiln::cli::report
