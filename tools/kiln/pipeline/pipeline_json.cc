#include "pipeline/pipeline_json.h"

namespace kiln::cli::pipeline {
namespace {

using nlohmann::json;

json class_json(int64_t cls, float score, const std::vector<std::string>& labels) {
  json j = {{"class", cls}, {"score", score}};
  if (cls >= 0 && static_cast<size_t>(cls) < labels.size()) j["label"] = labels[cls];
  return j;
}

json image_json(const ImageResult& r, const std::string& task,
                const std::vector<std::string>& labels) {
  json stages = json::object();
  for (size_t k = 0; k < kStages.size(); ++k) stages[kStages[k]] = r.stage_ms[k];
  stages["end_to_end"] = r.end_to_end_ms();
  json j = {{"file", r.file}, {"pass", r.pass}, {"stages_ms", stages}};
  if (task == "classify") {
    json top = json::array();
    for (const ClassScore& c : r.top) top.push_back(class_json(c.index, c.score, labels));
    j["top_k"] = top;
  } else {
    json dets = json::array();
    for (const Detection& d : r.detections) {
      json o = class_json(d.cls, d.score, labels);
      o["box"] = {d.box.x1, d.box.y1, d.box.x2, d.box.y2};
      dets.push_back(o);
    }
    j["detections"] = dets;
  }
  return j;
}

json stage_json(const StageStats& s) {
  return {{"stage", s.stage},
          {"p50_ms", s.p50},
          {"p99_ms", s.p99},
          {"mean_ms", s.mean},
          {"share_percent", s.share_percent}};
}

json budget_json(const PipelineStats& p) {
  if (!p.budget_ms) return nullptr;
  json levels = json::array();
  for (const BudgetLevel& l : p.budget) {
    json shrinks = json::array();
    for (const Shrink& s : l.shrinks) {
      shrinks.push_back({{"stage", s.stage}, {"ms", s.ms}, {"percent", s.percent}});
    }
    levels.push_back({{"level", l.level},
                      {"end_to_end_ms", l.end_to_end_ms},
                      {"meets", l.meets},
                      {"excess_ms", l.excess_ms},
                      {"shrink", shrinks},
                      {"verdict", describe(l, *p.budget_ms)}});
  }
  return {{"budget_ms", *p.budget_ms}, {"levels", levels}};
}

}  // namespace

json pipeline_json(const RunInfo& info, const std::vector<ImageResult>& timed,
                   const PipelineStats& p, const std::vector<std::string>& labels) {
  json images = json::array();
  for (const ImageResult& r : timed) images.push_back(image_json(r, info.task, labels));
  json stages = json::array();
  for (const StageStats& s : p.stages) stages.push_back(stage_json(s));
  return {{"schema", kPipelineSchema},
          {"schema_version", kPipelineSchemaVersion},
          {"command", info.command},
          {"engine", info.engine},
          {"images_folder", info.images},
          {"task", info.task},
          {"preprocess", info.preprocess},
          {"warm_up", info.warm_up},
          {"repeat", info.repeat},
          {"threads", info.threads},
          {"images", images},
          {"statistics",
           {{"images", p.images},
            {"wall_ms", p.wall_ms},
            {"images_per_s", p.images_per_s},
            {"stages", stages},
            {"end_to_end", stage_json(p.end_to_end)}}},
          {"budget", budget_json(p)}};
}

}  // namespace kiln::cli::pipeline
