#pragma once
// The report's tables as plain data (text cells), rendered by the HTML and the markdown writers
// alike: results by configuration, the reference backend against its peers, and the runs read.

#include <optional>
#include <string>
#include <vector>

#include "report/folder_reader.h"
#include "report/report_model.h"

namespace kiln::cli::report {

struct TableCell {
  std::string text;
  std::string css_class;  // "faster", "slower" or ""
  std::string title;      // a hover explanation, or ""
};

struct Table {
  std::string id;       // HTML id: "results", "peers", "runs"
  std::string caption;  // the heading
  std::string note;     // one paragraph under the heading saying what the columns mean
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<TableCell>> rows;
};

std::vector<Table> build_tables(const ReportModel& model, const ReportInputs& inputs);

// Number formats shared by the tables and the charts: about four significant digits without an
// exponent ("259.5", "12.35", "0.01230"); "—" for nullopt. Never "nan" or "inf".
std::string format_value(std::optional<double> v);
std::string format_ratio(std::optional<double> v);   // "2.31×"
std::string format_bytes(std::optional<int64_t> v);  // "44.6 MiB", "512 KiB", "900 B"
// "4", "2×4" (streams × threads per stream), "—" when the threads are unknown.
std::string format_threads(int streams, std::optional<int64_t> threads);
// The table's accuracy cell: "top1_percent −0.40" from delta, else "max |err| 6.3e-05".
std::string format_accuracy(const Accuracy& a);

}  // namespace kiln::cli::report
