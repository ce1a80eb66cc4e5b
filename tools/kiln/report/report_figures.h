#pragma once
// The report's charts, from the grouped rows: per model, latency by precision and backend (p50
// bars, p99 whiskers) and throughput against batch size (one line per backend and precision);
// per profiled configuration, the per-layer time breakdown (the slowest layers, the rest grouped);
// per configuration whose summary has accuracy.layers, the per-layer error against the reference.

#include <string>
#include <vector>

#include "report/report_model.h"

namespace kiln::cli::report {

struct Figure {
  std::string id;       // unique, usable as a file name: "latency-resnet50"
  std::string kind;     // "latency", "throughput", "layers", "layer-error"
  std::string caption;  // what the chart shows and how to read it
  std::string svg;
};

inline constexpr size_t kMaxLayerCharts = 8;   // per-layer charts beyond this are noted, not drawn
inline constexpr size_t kTopLayers = 12;       // layers drawn in a time breakdown; the rest grouped
inline constexpr size_t kTopErrorLayers = 15;  // layers drawn in an error chart

// `notes` receives a line for each chart left out.
std::vector<Figure> build_figures(const ReportModel& model, std::vector<std::string>& notes);

}  // namespace kiln::cli::report
