#pragma once
// The table of `kiln exec` flags (internal to the option parser and its help text).

#include <optional>
#include <span>
#include <string_view>

#include "exec/exec_options.h"

namespace kiln::cli::exec {

enum class Arity {
  kNone,           // --flag
  kValue,          // --flag=value (or --flag value)
  kOptionalValue,  // either; trtexec's boolean --threads vs kiln's --threads=N
};

struct FlagUse {
  std::string_view name;
  std::optional<std::string_view> value;
};

// A flag kiln implements (or parses now and implements later).
struct FlagDef {
  std::string_view name;
  Arity arity;
  std::string_view group;  // "Model", "Build", "Inference", "Reporting"
  std::string_view value_hint;
  std::string_view help;
  Status (*apply)(ExecOptions& options, const FlagUse& use);
  bool repeatable = false;
};

// A trtexec flag that means nothing on a CPU: accepted, with a note.
struct NoteFlag {
  std::string_view name;
  Arity arity;
  std::string_view note;
};

// A trtexec flag kiln exec does not implement: an Unsupported error.
struct UnsupportedFlag {
  std::string_view name;
  std::string_view reason;
};

std::span<const FlagDef> flag_table();
std::span<const NoteFlag> note_flags();
std::span<const UnsupportedFlag> unsupported_flags();

}  // namespace kiln::cli::exec
