#include "engine/serialize.h"

#include <fmt/format.h>

#include "engine/engine_file.h"
#include "engine/meta_json.h"

namespace kiln::engine {
namespace {

constexpr std::string_view kMetaSection = "meta";
constexpr std::string_view kWeightsSection = "weights";

Result<EngineFileWriter> make_writer(const Plan& plan) {
  KILN_ASSIGN_OR_RETURN(PlanSections sections, plan_to_sections(plan));
  EngineFileWriter writer;
  writer.set_required_features(plan.required_features);
  KILN_RETURN_IF_ERROR(writer.add_section(std::string(kMetaSection), sections.meta.dump()));
  auto tensors = std::make_shared<const std::vector<Tensor>>(std::move(sections.weights.tensors));
  KILN_RETURN_IF_ERROR(writer.add_section(std::string(kWeightsSection),
                                          std::move(sections.weights.pieces), std::move(tensors)));
  return writer;
}

}  // namespace

Result<std::string> serialize_plan(const Plan& plan) {
  KILN_ASSIGN_OR_RETURN(EngineFileWriter writer, make_writer(plan));
  return writer.to_bytes();
}

Status save_plan(const Plan& plan, const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(EngineFileWriter writer, make_writer(plan));
  return writer.write(path);
}

Result<Plan> load_plan(const std::filesystem::path& path, const LoadOptions& options,
                       EngineFileInfo* info) {
  ReadOptions read;
  read.check_cpu = options.check_cpu;
  KILN_ASSIGN_OR_RETURN(EngineFile file, read_engine_file(path, read));
  if (info != nullptr) {
    *info = EngineFileInfo{file.format_version(), file.kiln_version(), file.file_size(),
                           file.checksum()};
  }
  const auto meta = file.section(kMetaSection);
  const auto weights = file.section(kWeightsSection);
  if (!meta || !weights) {
    return corrupt("'{}': the engine has no '{}' section", path.string(),
                   meta ? kWeightsSection : kMetaSection);
  }
  const std::string_view meta_text(reinterpret_cast<const char*>(meta->data()), meta->size());
  Result<Plan> plan = plan_from_sections(meta_text, *weights, file.owner());
  if (!plan.is_ok()) return plan.status().with_context(fmt::format("'{}'", path.string()));
  if (plan->required_features != file.required_features()) {
    return corrupt("'{}': the meta section's CPU features disagree with the header", path.string());
  }
  return plan;
}

}  // namespace kiln::engine
