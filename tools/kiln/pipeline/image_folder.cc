#include "pipeline/image_folder.h"

#include <algorithm>
#include <sstream>

#include "io/file_util.h"

namespace kiln::cli::pipeline {

Result<std::vector<std::filesystem::path>> list_images(const std::filesystem::path& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) {
    return not_found("--images: folder '{}' does not exist", folder.string());
  }
  std::vector<std::filesystem::path> images;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    if (!e.is_regular_file()) continue;
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (ext == ".jpg" || ext == ".jpeg" || ext == ".png" || ext == ".bmp") {
      images.push_back(e.path());
    }
  }
  if (ec) return io_error("--images: cannot list '{}': {}", folder.string(), ec.message());
  if (images.empty()) {
    return invalid_argument("--images: folder '{}' has no images (.jpg, .jpeg, .png, .bmp)",
                            folder.string());
  }
  std::sort(images.begin(), images.end());
  return images;
}

Result<std::vector<std::string>> read_labels(const std::filesystem::path& path) {
  Result<std::string> text = io::read_file(path);
  if (!text.is_ok()) return text.status().with_context("--labels");
  std::vector<std::string> labels;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    labels.push_back(line);
  }
  return labels;
}

}  // namespace kiln::cli::pipeline
