#include "report/report_command.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>

#include "exec/exec_log.h"
#include "io/file_util.h"
#include "kiln/version.h"
#include "report/folder_reader.h"
#include "report/report_document.h"
#include "report/report_figures.h"
#include "report/report_model.h"
#include "report/report_tables.h"

namespace kiln::cli::report {
namespace {

namespace fs = std::filesystem;

Result<std::string> resolve_format(const ReportOptions& o) {
  if (o.output.empty()) return invalid_argument("-o: the report file to write is required");
  std::string format = o.format;
  if (format.empty()) format = fs::path(o.output).extension() == ".md" ? "md" : "html";
  if (format != "html" && format != "md") {
    return invalid_argument("--format={}: expected html or md", format);
  }
  const fs::path folder = fs::path(o.output).parent_path();
  std::error_code ec;
  if (!folder.empty() && !fs::is_directory(folder, ec)) {
    return not_found("-o: folder '{}' does not exist", folder.string());
  }
  return format;
}

// The markdown's charts: "<report stem>.<figure id>.svg" next to it, each written atomically
// before the markdown that links them.
Result<std::vector<std::string>> write_figure_files(const fs::path& output,
                                                    const std::vector<Figure>& figures) {
  std::vector<std::string> names;
  for (const Figure& f : figures) {
    const std::string name = fmt::format("{}.{}.svg", output.stem().string(), f.id);
    KILN_RETURN_IF_ERROR(io::write_file_atomic(output.parent_path() / name, f.svg));
    names.push_back(name);
  }
  return names;
}

}  // namespace

Status report_command(const ReportOptions& o, std::ostream& out) {
  KILN_ASSIGN_OR_RETURN(const std::string format, resolve_format(o));
  KILN_ASSIGN_OR_RETURN(const ReportInputs inputs, read_report_folder(o.folder));
  const ReportModel model = build_report_model(inputs.runs);
  ReportDocument doc;
  doc.title = o.title;
  doc.folder = o.folder;
  doc.generated = fmt::format("kiln {} ({}), {}", kVersion, kGitCommit, exec::utc_timestamp());
  doc.runs = inputs.runs.size();
  doc.files = inputs.files;
  doc.backends = model.backends;
  doc.models = model.models;
  doc.notes = inputs.notes;
  doc.figures = build_figures(model, doc.notes);
  doc.tables = build_tables(model, inputs);
  for (const std::string& n : doc.notes) fmt::print(out, "note: {}\n", n);
  if (format == "html") {
    KILN_RETURN_IF_ERROR(io::write_file_atomic(o.output, render_html(doc)));
  } else {
    KILN_ASSIGN_OR_RETURN(const auto files, write_figure_files(o.output, doc.figures));
    KILN_RETURN_IF_ERROR(io::write_file_atomic(o.output, render_markdown(doc, files)));
  }
  fmt::print(out, "{}: {} run(s), {} configuration(s), {} backend(s), {} table(s), {} chart(s){}\n",
             o.output, inputs.runs.size(), model.rows.size(), model.backends.size(),
             doc.tables.size(), doc.figures.size(),
             format == "md" && !doc.figures.empty() ? " (SVG files next to it)" : "");
  return Status::ok();
}

}  // namespace kiln::cli::report
