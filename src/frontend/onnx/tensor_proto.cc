#include "frontend/onnx/tensor_proto.h"

#include <fstream>

namespace kiln::frontend {
namespace {

using onnx::TensorProto;

// Copies `n` elements from a repeated proto field into typed storage.
template <typename To, typename Field>
void copy_field(const Field& field, To* out) {
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<To>(field.Get(i));
}

int typed_field_size(const TensorProto& p, DType t) {
  switch (t) {
    case DType::kF32:
      return p.float_data_size();
    case DType::kF64:
      return p.double_data_size();
    case DType::kI64:
      return p.int64_data_size();
    case DType::kU32:
    case DType::kU64:
      return p.uint64_data_size();
    default:
      return p.int32_data_size();  // int8/16/32, uint8/16, bool, float16 (as bits)
  }
}

void copy_typed_fields(const TensorProto& p, Tensor& t) {
  switch (t.dtype()) {
    case DType::kF32:
      copy_field(p.float_data(), t.data<float>());
      break;
    case DType::kF64:
      copy_field(p.double_data(), t.data<double>());
      break;
    case DType::kI64:
      copy_field(p.int64_data(), t.data<int64_t>());
      break;
    case DType::kU32:
      copy_field(p.uint64_data(), t.data<uint32_t>());
      break;
    case DType::kU64:
      copy_field(p.uint64_data(), t.data<uint64_t>());
      break;
    case DType::kI32:
      copy_field(p.int32_data(), t.data<int32_t>());
      break;
    case DType::kI16:
      copy_field(p.int32_data(), t.data<int16_t>());
      break;
    case DType::kI8:
      copy_field(p.int32_data(), t.data<int8_t>());
      break;
    case DType::kU16:
      copy_field(p.int32_data(), t.data<uint16_t>());
      break;
    case DType::kU8:
      copy_field(p.int32_data(), t.data<uint8_t>());
      break;
    case DType::kBool:
      copy_field(p.int32_data(), t.data<bool>());
      break;
    case DType::kF16: {
      Half* out = t.data<Half>();
      for (int i = 0; i < p.int32_data_size(); ++i) {
        out[i] = Half::from_bits(static_cast<uint16_t>(p.int32_data(i)));
      }
      break;
    }
    default:
      break;
  }
}

// Raw bytes may hold any non-zero value for true; C++ bool must be exactly 0 or 1.
void normalize_bools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  auto* bytes = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) bytes[i] = bytes[i] != 0;
}

struct ExternalInfo {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
};

Result<ExternalInfo> parse_external_info(const TensorProto& p, std::string_view what) {
  ExternalInfo info;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") info.location = kv.value();
      if (kv.key() == "offset") info.offset = std::stoll(kv.value());
      if (kv.key() == "length") info.length = std::stoll(kv.value());
    } catch (const std::exception&) {
      return invalid_model("{}: external data '{}' has a non-numeric value '{}'", what, kv.key(),
                           kv.value());
    }
  }
  if (info.location.empty()) return invalid_model("{}: external data has no location", what);
  if (info.offset < 0)
    return invalid_model("{}: external data offset {} is negative", what, info.offset);
  return info;
}

Status read_external(const TensorProto& p, const std::filesystem::path& model_dir,
                     std::string_view what, Tensor& t) {
  if (model_dir.empty()) {
    return invalid_model("{}: uses external data, but the model was not loaded from a file", what);
  }
  KILN_ASSIGN_OR_RETURN(ExternalInfo info, parse_external_info(p, what));
  KILN_ASSIGN_OR_RETURN(auto path, resolve_external_path(model_dir, info.location, what));
  std::error_code ec;
  const auto file_size = std::filesystem::file_size(path, ec);
  if (ec)
    return not_found("{}: external data file '{}' cannot be read: {}", what, path.string(),
                     ec.message());
  const auto need = static_cast<int64_t>(t.nbytes());
  if (info.length >= 0 && info.length != need) {
    return invalid_model("{}: external data length {} does not match {} ({} bytes)", what,
                         info.length, t.desc(), need);
  }
  if (static_cast<uint64_t>(info.offset) + static_cast<uint64_t>(need) > file_size) {
    return corrupt("{}: external data file '{}' has {} bytes, but offset {} + {} bytes are needed",
                   what, path.string(), file_size, info.offset, need);
  }
  std::ifstream in(path, std::ios::binary);
  in.seekg(info.offset);
  in.read(static_cast<char*>(t.raw_data()), need);
  if (!in) return io_error("{}: reading external data file '{}' failed", what, path.string());
  return Status::ok();
}

}  // namespace

DType dtype_from_onnx(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::UINT8:
      return DType::kU8;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT16:
      return DType::kU16;
    case TensorProto::INT16:
      return DType::kI16;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::STRING:
      return DType::kString;
    case TensorProto::BOOL:
      return DType::kBool;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::UINT32:
      return DType::kU32;
    case TensorProto::UINT64:
      return DType::kU64;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    default:
      return DType::kUndefined;
  }
}

std::string onnx_type_name(int32_t onnx_type) {
  switch (onnx_type) {
    case TensorProto::COMPLEX64:
      return "complex64";
    case TensorProto::COMPLEX128:
      return "complex128";
    case 17:
      return "float8e4m3fn";
    case 18:
      return "float8e4m3fnuz";
    case 19:
      return "float8e5m2";
    case 20:
      return "float8e5m2fnuz";
    case 21:
      return "uint4";
    case 22:
      return "int4";
    default:
      break;
  }
  const DType t = dtype_from_onnx(onnx_type);
  if (t == DType::kUndefined) return fmt::format("onnx type {}", onnx_type);
  return std::string(dtype_name(t));
}

Result<std::filesystem::path> resolve_external_path(const std::filesystem::path& model_dir,
                                                    const std::string& location,
                                                    std::string_view what) {
  namespace fs = std::filesystem;
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    return invalid_model(
        "{}: external data path '{}' is absolute; it must be relative to the model's folder", what,
        location);
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(model_dir, ec);
  const fs::path full = fs::weakly_canonical(model_dir / loc, ec);
  if (ec)
    return invalid_model("{}: external data path '{}' cannot be resolved: {}", what, location,
                         ec.message());
  const auto rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return invalid_model("{}: external data path '{}' leaves the model's folder '{}'", what,
                         location, base.string());
  }
  return full;
}

Result<Tensor> tensor_from_proto(const TensorProto& p, const std::filesystem::path& model_dir,
                                 std::string_view what) {
  const DType dtype = dtype_from_onnx(p.data_type());
  if (dtype == DType::kUndefined || dtype == DType::kString || dtype == DType::kBF16) {
    return unsupported("{}: element type {} is not supported", what, onnx_type_name(p.data_type()));
  }
  if (p.has_segment()) return unsupported("{}: segmented tensors are not supported", what);
  Dims dims(p.dims().begin(), p.dims().end());
  if (Status s = check_dims(dims, dtype, what); !s.is_ok()) {
    return Status(StatusCode::kInvalidModel, s.message());
  }
  Tensor t(dtype, dims);
  if (p.data_location() == TensorProto::EXTERNAL) {
    KILN_RETURN_IF_ERROR(read_external(p, model_dir, what, t));
    normalize_bools(t);
  } else if (p.has_raw_data()) {
    if (p.raw_data().size() != t.nbytes()) {
      return corrupt("{}: raw data has {} bytes, but {} needs {}", what, p.raw_data().size(),
                     t.desc(), t.nbytes());
    }
    std::memcpy(t.raw_data(), p.raw_data().data(), t.nbytes());
    normalize_bools(t);
  } else {
    const int n = typed_field_size(p, dtype);
    if (n != t.numel()) {
      return corrupt("{}: has {} values, but {} needs {}", what, n, t.desc(), t.numel());
    }
    copy_typed_fields(p, t);
  }
  return t;
}

}  // namespace kiln::frontend
