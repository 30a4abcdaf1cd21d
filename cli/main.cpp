// khub: Kernel Hub client and publisher. Parses arguments and dispatches to cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

#include <unistd.h>

#include "command.h"
#include "khub/base/temp_files.h"
#include "output.h"

namespace khub::cli {
namespace {
std::vector<std::pair<std::string, SetupFn>>& registry() {
  static std::vector<std::pair<std::string, SetupFn>> commands;
  return commands;
}
int g_exit_code = kOk;
bool g_json_errors = false;
}  // namespace

bool register_command(std::string_view name, SetupFn setup) {
  registry().emplace_back(std::string(name), setup);
  return true;
}

void set_exit_code(int code) { g_exit_code = code; }

int exit_code_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument:
    case ErrorCode::InvalidVariant:
      return kUsage;
    case ErrorCode::Unauthorized:
    case ErrorCode::Forbidden:
    case ErrorCode::GatedRepo:
      return kAuth;
    default:
      return kFailure;
  }
}

int report_error(const Error& error) {
  std::cerr << "error: " << error.describe() << '\n';
  if (g_json_errors) print_json(error_document(error));
  if (std::getenv("KHUB_DEBUG")) std::cerr << "  code: " << to_string(error.code) << '\n';
  return exit_code_for(error.code);
}

Status check_output_path(std::string_view flag, const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const std::string what = std::string(flag) + " " + path.string();
  if (path.empty()) return Error(ErrorCode::InvalidArgument, std::string(flag) + ": empty path");
  if (fs::is_directory(path, ec)) return Error(ErrorCode::InvalidArgument, what + " is a folder", "name a file in it");
  fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec))
    return Error(ErrorCode::InvalidArgument, what + ": folder " + parent.string() + " does not exist",
                 "create it first, or write elsewhere");
  if (::access(parent.c_str(), W_OK) != 0)
    return Error(ErrorCode::InvalidArgument, what + ": folder " + parent.string() + " is not writable");
  return {};
}

Status check_input_file(std::string_view flag, const std::filesystem::path& path) {
  std::error_code ec;
  if (path.empty()) return Error(ErrorCode::InvalidArgument, std::string(flag) + ": empty path");
  if (!std::filesystem::exists(path, ec))
    return Error(ErrorCode::InvalidArgument, std::string(flag) + " " + path.string() + ": no such file or directory");
  if (std::filesystem::is_directory(path, ec))
    return Error(ErrorCode::InvalidArgument, std::string(flag) + " " + path.string() + " is a folder, not a file");
  return {};
}

}  // namespace khub::cli

int main(int argc, char** argv) {
  using namespace khub::cli;
  CLI::App app{"khub: load, verify and publish compute kernels from a Kernel Hub", "khub"};
  app.set_version_flag("--version", std::string("khub ") + KHUB_VERSION);
  app.require_subcommand(1);
  khub::remove_temp_files_on_signal();  // Ctrl-C during pack, sign or a cache write leaves no temp file
  for (int i = 1; i < argc; ++i) g_json_errors |= std::string_view(argv[i]) == "--json";
  auto& commands = registry();
  std::sort(commands.begin(), commands.end());
  for (auto& [name, setup] : commands) setup(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string first = argc > 1 ? argv[1] : "";
    const bool known = std::any_of(commands.begin(), commands.end(), [&](const auto& c) { return c.first == first; });
    // Through report_error, so --json gets its error object on stdout here too.
    if (!known && !first.empty() && first[0] != '-')
      report_error(khub::Error(khub::ErrorCode::InvalidArgument, "unknown command '" + first + "'", "run `khub --help` for the list"));
    else
      report_error(khub::Error(khub::ErrorCode::InvalidArgument, e.what(),
                         "run `khub " + (known ? first + " " : "") + "--help` for usage"));
    return kUsage;
  } catch (const std::exception& e) {  // a library's throw inside a command: one line, not std::terminate
    std::cerr << "error: " << e.what() << '\n';
    return kFailure;
  }
  return g_exit_code;
}
