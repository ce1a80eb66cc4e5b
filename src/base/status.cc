#include "base/status.h"

namespace kiln {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case StatusCode::kInvalidModel:
      return "InvalidModel";
    case StatusCode::kUnsupported:
      return "Unsupported";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kIoError:
      return "IoError";
    case StatusCode::kCorrupt:
      return "Corrupt";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  return fmt::format("{}: {}", status_code_name(code_), message_);
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_));
}

}  // namespace kiln
