#include "io/raw_tensor.h"

#include <cstring>
#include <system_error>

#include "io/file_util.h"

namespace kiln::io {

Result<Tensor> read_raw(const std::filesystem::path& path, DType dtype, const Dims& dims) {
  const std::string what = fmt::format("raw input '{}'", path.string());
  if (dtype_size(dtype) == 0) {
    return unsupported("{}: dtype {} has no fixed-size binary form", what, dtype_name(dtype));
  }
  KILN_RETURN_IF_ERROR(check_dims(dims, dtype, what));
  const size_t expected = static_cast<size_t>(dims_numel(dims)) * dtype_size(dtype);
  // Compare sizes before reading, so a wrong (possibly huge) file is rejected without loading it.
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size != expected) {
    return invalid_argument("{}: file is {} bytes but {}[{}] needs exactly {} bytes", what, size,
                            dtype_name(dtype), dims_to_string(dims), expected);
  }
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (bytes.size() != expected) {  // the file changed, or is not a regular file
    return invalid_argument("{}: read {} bytes but {}[{}] needs exactly {} bytes", what,
                            bytes.size(), dtype_name(dtype), dims_to_string(dims), expected);
  }
  Tensor t(dtype, dims);
  if (expected > 0) std::memcpy(t.raw_data(), bytes.data(), expected);
  if (dtype == DType::kBool) {
    auto* b = static_cast<unsigned char*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0 ? 1 : 0;
  }
  return t;
}

Status write_raw(const std::filesystem::path& path, const Tensor& tensor) {
  if (!tensor.defined() || dtype_size(tensor.dtype()) == 0) {
    return unsupported("writing '{}': {} has no fixed-size binary form", path.string(),
                       tensor.desc());
  }
  return write_file_atomic(
      path, std::string_view(static_cast<const char*>(tensor.raw_data()), tensor.nbytes()));
}

}  // namespace kiln::io
