#pragma once
// Parsing of trtexec-style option values shared by the kiln subcommands. Every parser names the
// flag and the bad part of its value in errors.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"

namespace kiln::cli {

// Splits "a:b,c:d" at top-level commas, honouring single/double quotes around names.
Result<std::vector<std::string>> split_list(std::string_view flag, std::string_view value);

// A finite number, the whole value; the error names the flag.
Result<double> parse_real(std::string_view flag, std::string_view v);

// An optional number in [0, max] (a tolerance): nullopt for an empty value.
Result<std::optional<double>> parse_optional_bound(std::string_view flag, std::string_view v,
                                                   double max);

// "--shapes=input:1x3x224x224,mask:1x128": names may be quoted ('in:0':1x3) as in trtexec.
Result<std::map<std::string, Dims>> parse_shapes(std::string_view flag, std::string_view value);

// "--flag=a:x,'b:0':y" -> name -> value. `what` names the value in errors ("file", "size").
Result<std::map<std::string, std::string>> parse_named_values(std::string_view flag,
                                                              std::string_view value,
                                                              std::string_view what);

// "--loadInputs=input:file.npy,mask:mask.bin" -> name -> path.
Result<std::map<std::string, std::string>> parse_named_files(std::string_view flag,
                                                             std::string_view value);

// "1x3x224x224" -> {1, 3, 224, 224}; each dim a non-negative integer.
Result<Dims> parse_dims(std::string_view flag, std::string_view text);

}  // namespace kiln::cli
