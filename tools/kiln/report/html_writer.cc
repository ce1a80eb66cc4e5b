// render_html: one file that a browser shows and prints with nothing else: the stylesheet is
// inline, the charts are inline SVG, fonts are the system's generic sans-serif.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/report_document.h"
#include "report/svg.h"

namespace kiln::cli::report {
namespace {

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; color: #222;
       max-width: 1120px; margin: 24px auto; padding: 0 16px; font-size: 14px; line-height: 1.4; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; border-bottom: 1px solid #ccc; padding-bottom: 2px; }
p.meta, p.note, figcaption { color: #555; font-size: 12px; max-width: 900px; }
nav a { margin-right: 14px; font-size: 13px; }
.wide { overflow-x: auto; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 9px; text-align: left; white-space: nowrap; }
th { background: #f2f2f2; border-bottom: 2px solid #bbb; white-space: normal; max-width: 9em;
     vertical-align: bottom; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.faster { color: #006d2c; font-weight: bold; }
td.slower { color: #b30000; }
figure { margin: 10px 0 26px; }
figure svg { display: block; max-width: 100%; height: auto; }
ul.notes { font-size: 12px; color: #555; }
@media print {
  @page { size: A4; margin: 12mm; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  body { max-width: none; margin: 0; padding: 0; font-size: 10pt; }
  nav { display: none; }
  .wide { overflow: visible; }
  table { font-size: 7.5pt; }
  th, td { white-space: normal; padding: 2px 5px; }
  td.num { white-space: nowrap; }
  thead { display: table-header-group; }
  tr, figure { break-inside: avoid; page-break-inside: avoid; }
  h2 { break-after: avoid; page-break-after: avoid; }
  figure svg { width: 100%; }
}
)";

std::string html_table(const Table& t) {
  std::string h =
      fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", xml_escape(t.id), xml_escape(t.caption));
  if (!t.note.empty()) h += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(t.note));
  h += fmt::format("<div class=\"wide\"><table id=\"table-{}\">\n<thead><tr>", xml_escape(t.id));
  for (size_t i = 0; i < t.headers.size(); ++i) {
    h += fmt::format("<th{}>{}</th>", t.numeric[i] ? " class=\"num\"" : "",
                     xml_escape(t.headers[i]));
  }
  h += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    h += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      std::string cls = i < t.numeric.size() && t.numeric[i] ? "num" : "";
      if (!row[i].css_class.empty()) cls += (cls.empty() ? "" : " ") + row[i].css_class;
      h += fmt::format("<td{}{}>{}</td>", cls.empty() ? "" : " class=\"" + cls + "\"",
                       row[i].title.empty() ? "" : " title=\"" + xml_escape(row[i].title) + "\"",
                       xml_escape(row[i].text));
    }
    h += "</tr>\n";
  }
  return h + "</tbody>\n</table></div>\n</section>\n";
}

struct FigureSection {
  const char* kind;
  const char* id;
  const char* heading;
};

constexpr FigureSection kFigureSections[] = {
    {"latency", "latency", "Latency by precision and backend"},
    {"throughput", "throughput", "Throughput against batch size"},
    {"layers", "layers", "Per-layer time"},
    {"layer-error", "layer-error", "Per-layer error"},
};

std::string html_figures(const ReportDocument& doc, const FigureSection& s) {
  std::string h;
  for (const Figure& f : doc.figures) {
    if (f.kind != s.kind) continue;
    h += fmt::format("<figure id=\"{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n",
                     xml_escape(f.id), f.svg, xml_escape(f.caption));
  }
  if (h.empty()) return h;
  return fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", s.id, s.heading, h);
}

std::string html_nav(const ReportDocument& doc) {
  std::string h = "<nav>";
  for (const Table& t : doc.tables) {
    if (t.id != "runs") h += fmt::format("<a href=\"#{}\">{}</a>", t.id, xml_escape(t.caption));
  }
  for (const FigureSection& s : kFigureSections) {
    for (const Figure& f : doc.figures) {
      if (f.kind == s.kind) {
        h += fmt::format("<a href=\"#{}\">{}</a>", s.id, s.heading);
        break;
      }
    }
  }
  return h + "<a href=\"#runs\">Runs read</a></nav>\n";
}

}  // namespace

std::string render_html(const ReportDocument& doc) {
  std::string h = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>{}</style>\n"
      "</head>\n<body>\n<header>\n<h1>{}</h1>\n",
      xml_escape(doc.generated), xml_escape(doc.title), kStyle, xml_escape(doc.title));
  h += fmt::format(
      "<p class=\"meta\">{} run(s) of {} model(s) on {} backend(s) ({}) read from {} file(s) in "
      "<code>{}</code>. Generated by {}.</p>\n</header>\n",
      doc.runs, doc.models.size(), doc.backends.size(),
      xml_escape(fmt::format("{}", fmt::join(doc.backends, ", "))), doc.files,
      xml_escape(doc.folder), xml_escape(doc.generated));
  h += html_nav(doc);
  for (const Table& t : doc.tables) {
    if (t.id != "runs") h += html_table(t);
  }
  for (const FigureSection& s : kFigureSections) h += html_figures(doc, s);
  for (const Table& t : doc.tables) {
    if (t.id == "runs") h += html_table(t);
  }
  if (!doc.notes.empty()) {
    h += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul class=\"notes\">\n";
    for (const std::string& n : doc.notes) h += fmt::format("<li>{}</li>\n", xml_escape(n));
    h += "</ul>\n</section>\n";
  }
  return h + "</body>\n</html>\n";
}

}  // namespace kiln::cli::report
