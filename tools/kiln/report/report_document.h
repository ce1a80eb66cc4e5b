#pragma once
// A rendered report's content, and its two renderings: one self-contained HTML file (inline SVG
// charts, an inline stylesheet with print rules; no script, no network, no external font) and
// markdown (the same tables; the charts as SVG files written next to it, linked).

#include <string>
#include <vector>

#include "report/report_figures.h"
#include "report/report_tables.h"

namespace kiln::cli::report {

struct ReportDocument {
  std::string title;
  std::string folder;     // as given
  std::string generated;  // "kiln 0.1.0 (abcdef), 2026-11-25T18:07:03Z"
  size_t runs = 0, files = 0;
  std::vector<std::string> backends, models;
  std::vector<Table> tables;
  std::vector<Figure> figures;
  std::vector<std::string> notes;
};

std::string render_html(const ReportDocument& doc);

// figure_files[i] is the SVG file of doc.figures[i], relative to the markdown file.
std::string render_markdown(const ReportDocument& doc,
                            const std::vector<std::string>& figure_files);

}  // namespace kiln::cli::report
