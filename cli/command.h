#pragma once
// The khub executable is a list of subcommands; each lives in its own cmd_<name>.cpp with an
// options struct, a setup function that declares its flags, and a run function that calls one
// library function. Files register themselves, so adding a command touches no other file.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "khub/base/error.h"

namespace khub::cli {

/// Exit codes shared by every command: 0 ok, 1 failure, 2 usage / bad input, 4 auth.
enum ExitCode : int { kOk = 0, kFailure = 1, kUsage = 2, kAuth = 4 };

using SetupFn = void (*)(CLI::App& root);

/// Registers a subcommand's setup; call from a namespace-scope initialiser.
bool register_command(std::string_view name, SetupFn setup);

/// Sets the process exit code from a subcommand callback.
void set_exit_code(int code);

/// Prints "error: …" (notes, hint) on stderr and returns the exit code for its ErrorCode. With
/// --json on the command line it also prints {"error": {"code", "message", "hint", "notes"}} on
/// stdout, so scripts reading stdout get something to parse.
int report_error(const Error& error);

/// InvalidArgument unless `path` can be written as an output file: not empty, not a folder, in a
/// folder that exists. Commands check their output paths before they change anything.
[[nodiscard]] Status check_output_path(std::string_view flag, const std::filesystem::path& path);

/// InvalidArgument unless `path` names an existing file: a missing input is the caller's mistake.
[[nodiscard]] Status check_input_file(std::string_view flag, const std::filesystem::path& path);

/// A flag given an empty value is a mistake, not the flag left out (`--branch ''` from an unset
/// shell variable would otherwise push to the default branch).
inline const CLI::Validator kNotEmpty(
    [](std::string& value) { return value.empty() ? std::string("must not be empty") : std::string(); }, "");

/// Exit code a given error maps to.
int exit_code_for(ErrorCode code);

}  // namespace khub::cli

#define KHUB_REGISTER_COMMAND(name, setup) \
  static const bool KHUB_CONCAT(khub_registered_, __LINE__) = ::khub::cli::register_command(name, setup)
