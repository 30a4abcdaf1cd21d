// khub: Kernel Hub client and publisher. Parses arguments and dispatches to cmd_*.cpp.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>
#include <vector>

#include "command.h"

namespace khub::cli {
namespace {
std::vector<std::pair<std::string, SetupFn>>& registry() {
  static std::vector<std::pair<std::string, SetupFn>> commands;
  return commands;
}
int g_exit_code = kOk;
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
  if (std::getenv("KHUB_DEBUG")) std::cerr << "  code: " << to_string(error.code) << '\n';
  return exit_code_for(error.code);
}

}  // namespace khub::cli

int main(int argc, char** argv) {
  using namespace khub::cli;
  CLI::App app{"khub: load, verify and publish compute kernels from a Kernel Hub", "khub"};
  app.set_version_flag("--version", std::string("khub ") + KHUB_VERSION);
  app.require_subcommand(1);
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
    std::cerr << "error: " << e.what() << "\n  hint: run `khub --help` for usage\n";
    return kUsage;
  } catch (const std::exception& e) {  // a library's throw inside a command: one line, not std::terminate
    std::cerr << "error: " << e.what() << '\n';
    return kFailure;
  }
  return g_exit_code;
}
