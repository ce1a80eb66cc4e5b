#include "io/npy_header.h"

#include <bit>
#include <cctype>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::io {
namespace {

// A Python literal as it appears in a header. Bools are kept in `integer` (0/1); a dict keeps its
// keys and values alternating in `items`.
struct PyValue {
  enum class Kind { kStr, kInt, kBool, kNone, kTuple, kList, kDict };
  explicit PyValue(Kind k) : kind(k) {}
  Kind kind;
  std::string str;
  int64_t integer = 0;
  std::vector<PyValue> items;
};

std::string_view kind_name(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::kStr:
      return "a string";
    case PyValue::Kind::kInt:
      return "an integer";
    case PyValue::Kind::kBool:
      return "a bool";
    case PyValue::Kind::kNone:
      return "None";
    case PyValue::Kind::kTuple:
      return "a tuple";
    case PyValue::Kind::kList:
      return "a list";
    case PyValue::Kind::kDict:
      return "a dict";
  }
  return "?";
}

// Reads one Python literal. Nesting is bounded so that hostile input cannot exhaust the stack.
class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : text_(text) {}

  // The whole text must be one literal, optionally followed by whitespace (numpy pads with spaces
  // and ends the header with '\n').
  Result<PyValue> parse_all() {
    KILN_ASSIGN_OR_RETURN(PyValue v, parse_value(0));
    skip_ws();
    if (pos_ != text_.size()) return error("unexpected text after the header dict");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }
  std::string describe_next() const {
    if (at_end()) return "end of header";
    const auto c = static_cast<unsigned char>(peek());
    if (std::isprint(c)) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
  }
  Status error(std::string_view what) const {
    return corrupt("malformed header at offset {}: {}", pos_, what);
  }
  Status unexpected(std::string_view expected) const {
    return error(fmt::format("expected {}, found {}", expected, describe_next()));
  }

  Result<PyValue> parse_value(int depth) {
    if (depth > kMaxDepth) return error(fmt::format("nested deeper than {} levels", kMaxDepth));
    skip_ws();
    const char c = peek();
    if (c == '\'' || c == '"') return parse_string();
    if (c == '(') return parse_sequence(depth, ')', PyValue::Kind::kTuple);
    if (c == '[') return parse_sequence(depth, ']', PyValue::Kind::kList);
    if (c == '{') return parse_sequence(depth, '}', PyValue::Kind::kDict);
    if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) return parse_int();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name();
    return unexpected("a value");
  }

  Result<PyValue> parse_string() {
    const char quote = text_[pos_++];
    PyValue v(PyValue::Kind::kStr);
    while (!at_end() && peek() != quote && peek() != '\n') {
      if (peek() == '\\') {  // escapes are kept verbatim: no supported descr contains one
        ++pos_;
        if (at_end()) break;
      }
      v.str += text_[pos_++];
    }
    if (peek() != quote) return error("unterminated string");
    ++pos_;
    return v;
  }

  Result<PyValue> parse_int() {
    const bool negative = peek() == '-';
    if (peek() == '-' || peek() == '+') ++pos_;
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return unexpected("a digit");
    const uint64_t limit =
        negative ? uint64_t{1} << 63 : uint64_t{std::numeric_limits<int64_t>::max()};
    uint64_t magnitude = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const auto digit = static_cast<uint64_t>(peek() - '0');
      if (magnitude > (limit - digit) / 10) return error("integer does not fit in 64 bits");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long suffix, written by old numpy
    if (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '.' || peek() == '_') {
      return unexpected("an integer");
    }
    PyValue v(PyValue::Kind::kInt);
    v.integer = negative ? static_cast<int64_t>(~magnitude + 1) : static_cast<int64_t>(magnitude);
    return v;
  }

  Result<PyValue> parse_name() {
    const size_t start = pos_;
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    if (name == "True" || name == "False") {
      PyValue v(PyValue::Kind::kBool);
      v.integer = name == "True" ? 1 : 0;
      return v;
    }
    if (name == "None") return PyValue(PyValue::Kind::kNone);
    pos_ = start;
    return error(fmt::format("unexpected name '{}'", name));
  }

  // Tuples, lists and dicts: comma-separated, optional trailing comma. "(x)" without a comma is
  // a parenthesised value, as in Python.
  Result<PyValue> parse_sequence(int depth, char close, PyValue::Kind kind) {
    ++pos_;
    PyValue v(kind);
    bool saw_comma = false;
    skip_ws();
    while (peek() != close) {
      KILN_ASSIGN_OR_RETURN(PyValue item, parse_value(depth + 1));
      v.items.push_back(std::move(item));
      skip_ws();
      if (kind == PyValue::Kind::kDict) {
        if (peek() != ':') return unexpected("':' after a dict key");
        ++pos_;
        KILN_ASSIGN_OR_RETURN(PyValue value, parse_value(depth + 1));
        v.items.push_back(std::move(value));
        skip_ws();
      }
      if (peek() == ',') {
        saw_comma = true;
        ++pos_;
        skip_ws();
      } else if (peek() != close) {
        return unexpected(fmt::format("',' or '{}'", close));
      }
    }
    ++pos_;
    if (kind == PyValue::Kind::kTuple && v.items.size() == 1 && !saw_comma) {
      return std::move(v.items[0]);
    }
    return v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::string_view describe_descr_kind(char kind) {
  switch (kind) {
    case 'U':
      return "unicode strings";
    case 'S':
    case 'a':
      return "byte strings";
    case 'O':
      return "Python objects";
    case 'c':
      return "complex numbers";
    case 'V':
      return "raw or structured records";
    case 'M':
      return "datetimes";
    case 'm':
      return "timedeltas";
    default:
      return "unknown type";
  }
}

Status unsupported_descr(std::string_view descr, std::string_view why) {
  return unsupported(
      "descr '{}' ({}) is not supported; supported: float16/32/64, int8/16/32/64, "
      "uint8/16/32/64 and bool, in either byte order",
      descr, why);
}

// The numpy types kiln reads and writes: kind character and item size of the descr.
struct NpyType {
  char kind;
  int size;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {
    {'f', 2, DType::kF16}, {'f', 4, DType::kF32}, {'f', 8, DType::kF64}, {'i', 1, DType::kI8},
    {'i', 2, DType::kI16}, {'i', 4, DType::kI32}, {'i', 8, DType::kI64}, {'u', 1, DType::kU8},
    {'u', 2, DType::kU16}, {'u', 4, DType::kU32}, {'u', 8, DType::kU64}, {'b', 1, DType::kBool},
};

// DType for a numpy kind character and item size, or kUndefined.
DType dtype_for(char kind, int size) {
  for (const NpyType& t : kNpyTypes) {
    if (t.kind == kind && t.size == size) return t.dtype;
  }
  return DType::kUndefined;
}

// Finds `key` in a parsed dict; duplicate keys are an error (Python would silently keep the last).
Result<const PyValue*> find_key(const PyValue& dict, std::string_view key) {
  const PyValue* found = nullptr;
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    if (dict.items[i].str != key) continue;
    if (found) return corrupt("header has key '{}' twice", key);
    found = &dict.items[i + 1];
  }
  if (!found) return corrupt("header has no '{}' key", key);
  return found;
}

Status check_keys(const PyValue& dict) {
  for (size_t i = 0; i < dict.items.size(); i += 2) {
    const PyValue& key = dict.items[i];
    if (key.kind != PyValue::Kind::kStr) {
      return corrupt("header dict has a key that is {}, not a string", kind_name(key.kind));
    }
    if (key.str != "descr" && key.str != "fortran_order" && key.str != "shape") {
      return corrupt("header has unexpected key '{}' (expected 'descr', 'fortran_order', 'shape')",
                     key.str);
    }
  }
  return Status::ok();
}

Result<Dims> parse_shape(const PyValue& v) {
  if (v.kind != PyValue::Kind::kTuple) {
    return corrupt("header 'shape' is {}, expected a tuple of integers", kind_name(v.kind));
  }
  Dims shape;
  for (const PyValue& d : v.items) {
    if (d.kind != PyValue::Kind::kInt) {
      return corrupt("header 'shape' has an element that is {}, expected an integer",
                     kind_name(d.kind));
    }
    shape.push_back(d.integer);
  }
  return shape;
}

}  // namespace

Status parse_npy_descr(std::string_view descr, DType* dtype, bool* swap_bytes) {
  std::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '|' || rest[0] == '=')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  if (rest == "?") rest = "b1";
  if (rest.empty()) return unsupported_descr(descr, "no type");
  const char kind = rest[0];
  std::string_view digits = rest.substr(1);
  int size = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c)) || size > 1000) {
      return unsupported_descr(descr, describe_descr_kind(kind));
    }
    size = size * 10 + (c - '0');
  }
  const DType t = digits.empty() ? DType::kUndefined : dtype_for(kind, size);
  if (t == DType::kUndefined) {
    if (kind == 'f' && size > 8) return unsupported_descr(descr, "extended precision floats");
    if (!digits.empty() && (kind == 'f' || kind == 'i' || kind == 'u' || kind == 'b')) {
      return unsupported_descr(descr, fmt::format("no {}-byte '{}' type", size, kind));
    }
    return unsupported_descr(descr, describe_descr_kind(kind));
  }
  constexpr bool kLittleHost = std::endian::native == std::endian::little;
  *dtype = t;
  *swap_bytes =
      dtype_size(t) > 1 && ((order == '<' && !kLittleHost) || (order == '>' && kLittleHost));
  return Status::ok();
}

Result<NpyHeader> parse_npy_header_dict(std::string_view text) {
  KILN_ASSIGN_OR_RETURN(PyValue dict, LiteralParser(text).parse_all());
  if (dict.kind != PyValue::Kind::kDict) {
    return corrupt("header is {}, expected a dict", kind_name(dict.kind));
  }
  KILN_RETURN_IF_ERROR(check_keys(dict));
  NpyHeader header;
  KILN_ASSIGN_OR_RETURN(const PyValue* descr, find_key(dict, "descr"));
  if (descr->kind == PyValue::Kind::kList) {
    return unsupported("structured dtypes (a list 'descr') are not supported");
  }
  if (descr->kind != PyValue::Kind::kStr) {
    return corrupt("header 'descr' is {}, expected a string", kind_name(descr->kind));
  }
  KILN_RETURN_IF_ERROR(parse_npy_descr(descr->str, &header.dtype, &header.swap_bytes));
  KILN_ASSIGN_OR_RETURN(const PyValue* fortran, find_key(dict, "fortran_order"));
  if (fortran->kind != PyValue::Kind::kBool) {
    return corrupt("header 'fortran_order' is {}, expected True or False",
                   kind_name(fortran->kind));
  }
  header.fortran_order = fortran->integer != 0;
  KILN_ASSIGN_OR_RETURN(const PyValue* shape, find_key(dict, "shape"));
  KILN_ASSIGN_OR_RETURN(header.shape, parse_shape(*shape));
  const Status dims_ok = check_dims(header.shape, header.dtype, "header 'shape'");
  if (!dims_ok.is_ok()) return Status(StatusCode::kCorrupt, dims_ok.message());
  return header;
}

Result<std::string> npy_descr_for(DType dtype) {
  for (const NpyType& t : kNpyTypes) {
    // Data is written little-endian; numpy marks single-byte types as byte-order-free ('|').
    if (t.dtype == dtype) return fmt::format("{}{}{}", t.size == 1 ? '|' : '<', t.kind, t.size);
  }
  return unsupported("dtype {} has no NumPy .npy equivalent", dtype_name(dtype));
}

}  // namespace kiln::io
