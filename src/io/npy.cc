#include "io/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "io/file_util.h"
#include "io/npy_header.h"

namespace kiln::io {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kHeaderAlignment = 64;

uint32_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  }
  return v;
}

// Copies one element of `size` bytes, reversing its bytes when `swap` is set.
inline void copy_element(char* dst, const char* src, size_t size, bool swap) {
  if (swap) {
    for (size_t b = 0; b < size; ++b) dst[b] = src[size - 1 - b];
  } else {
    std::memcpy(dst, src, size);
  }
}

// Copies `count` elements, swapping bytes if needed.
void copy_elements(char* dst, const char* src, int64_t count, size_t size, bool swap) {
  if (!swap) {
    std::memcpy(dst, src, static_cast<size_t>(count) * size);
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    copy_element(dst + i * size, src + i * size, size, true);
  }
}

// Reorders column-major data of `shape` into row-major `dst`: walks the output in row-major order
// with an odometer over the index, keeping the matching column-major offset up to date.
void transpose_from_fortran(char* dst, const char* src, const Dims& shape, size_t size, bool swap) {
  const size_t rank = shape.size();
  std::vector<int64_t> fstride(rank, 1);
  for (size_t k = 1; k < rank; ++k) fstride[k] = fstride[k - 1] * shape[k - 1];
  std::vector<int64_t> index(rank, 0);
  const int64_t count = dims_numel(shape);
  int64_t src_offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    copy_element(dst + i * size, src + src_offset * size, size, swap);
    for (size_t k = rank; k-- > 0;) {
      src_offset += fstride[k];
      if (++index[k] < shape[k] || k == 0) break;
      src_offset -= shape[k] * fstride[k];
      index[k] = 0;
    }
  }
}

// Splits off the preamble and returns the header dict text and the offset of the data.
Status split_preamble(std::string_view bytes, std::string_view* header, size_t* data_offset) {
  const size_t magic_seen = std::min(bytes.size(), kMagic.size());
  if (bytes.substr(0, magic_seen) != kMagic.substr(0, magic_seen)) {
    return corrupt("not a .npy file (bad magic: does not start with \\x93NUMPY)");
  }
  if (bytes.size() < kMagic.size() + 2) {
    return corrupt("truncated: {} bytes, too short for the format version", bytes.size());
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return unsupported("format version {}.{} is not supported (expected 1.0, 2.0 or 3.0)", major,
                       minor);
  }
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagic.size() + 2 + length_width;
  if (bytes.size() < header_start) {
    return corrupt("truncated: {} bytes, too short for the header length field", bytes.size());
  }
  const size_t header_length = read_le(bytes, kMagic.size() + 2, length_width);
  if (header_length > bytes.size() - header_start) {
    return corrupt("truncated header: it claims {} bytes but only {} follow", header_length,
                   bytes.size() - header_start);
  }
  *header = bytes.substr(header_start, header_length);
  *data_offset = header_start + header_length;
  return Status::ok();
}

Result<Tensor> parse_npy_impl(std::string_view bytes) {
  std::string_view header_text;
  size_t data_offset = 0;
  KILN_RETURN_IF_ERROR(split_preamble(bytes, &header_text, &data_offset));
  KILN_ASSIGN_OR_RETURN(NpyHeader header, parse_npy_header_dict(header_text));
  // check_dims (in the header parser) bounds the size, so this cannot overflow. Checked before
  // allocating, so a tiny file cannot make us allocate what its shape claims.
  const size_t needed = static_cast<size_t>(dims_numel(header.shape)) * dtype_size(header.dtype);
  const size_t available = bytes.size() - data_offset;
  if (available < needed) {
    return corrupt("truncated data: {}[{}] needs {} bytes but only {} follow the header",
                   dtype_name(header.dtype), dims_to_string(header.shape), needed, available);
  }
  Tensor t(header.dtype, header.shape);
  if (t.numel() == 0) return t;
  const char* src = bytes.data() + data_offset;
  char* dst = static_cast<char*>(t.raw_data());
  const size_t size = dtype_size(header.dtype);
  if (header.fortran_order && t.rank() > 1) {
    transpose_from_fortran(dst, src, header.shape, size, header.swap_bytes);
  } else {
    copy_elements(dst, src, t.numel(), size, header.swap_bytes);
  }
  if (header.dtype == DType::kBool) {  // any byte but 0 would not be a valid C++ bool
    auto* b = static_cast<unsigned char*>(t.raw_data());
    for (int64_t i = 0; i < t.numel(); ++i) b[i] = b[i] != 0 ? 1 : 0;
  }
  return t;
}

std::string shape_literal(const Dims& dims) {
  if (dims.size() == 1) return fmt::format("({},)", dims[0]);
  return fmt::format("({})", fmt::join(dims, ", "));
}

}  // namespace

Result<Tensor> parse_npy(std::string_view bytes, std::string_view source_name) {
  Result<Tensor> t = parse_npy_impl(bytes);
  if (!t.is_ok()) return t.status().with_context(fmt::format("'{}'", source_name));
  return t;
}

Result<Tensor> read_npy(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  return parse_npy(bytes, path.string());
}

Result<std::string> serialize_npy(const Tensor& tensor) {
  KILN_ASSIGN_OR_RETURN(std::string descr, npy_descr_for(tensor.dtype()));
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr,
                                 shape_literal(tensor.dims()));
  // Pad with spaces and end with '\n' so that the data starts on an aligned offset.
  const size_t v1_prefix = kMagic.size() + 2 + 2;
  const bool v1 = v1_prefix + dict.size() + 1 + kHeaderAlignment <= 65535;
  const size_t prefix = v1 ? v1_prefix : kMagic.size() + 2 + 4;
  const size_t unpadded = prefix + dict.size() + 1;
  dict.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  dict += '\n';

  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  const size_t length = dict.size();
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  out += dict;
  const size_t data_offset = out.size();
  out.resize(data_offset + tensor.nbytes());
  constexpr bool kSwap = std::endian::native != std::endian::little;
  if (tensor.numel() > 0) {
    copy_elements(out.data() + data_offset, static_cast<const char*>(tensor.raw_data()),
                  tensor.numel(), dtype_size(tensor.dtype()), kSwap);
  }
  return out;
}

Status write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  Result<std::string> bytes = serialize_npy(tensor);
  if (!bytes.is_ok())
    return bytes.status().with_context(fmt::format("writing '{}'", path.string()));
  return write_file_atomic(path, *bytes);
}

}  // namespace kiln::io
