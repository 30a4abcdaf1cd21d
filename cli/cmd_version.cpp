// khub version: the version of khub and of the features this build has.
#include <iostream>

#include "command.h"

namespace khub::cli {
namespace {

void setup_version(CLI::App& root) {
  auto* cmd = root.add_subcommand("version", "Print khub's version and build features");
  cmd->callback([] {
    std::cout << "khub " << KHUB_VERSION << " (torch=" << (KHUB_HAVE_TORCH ? "yes" : "no")
              << ", server=" << (KHUB_HAVE_SERVER ? "yes" : "no")
              << ", archive=" << (KHUB_HAVE_ARCHIVE ? "yes" : "no") << ")\n";
  });
}

}  // namespace
KHUB_REGISTER_COMMAND("version", setup_version);
}  // namespace khub::cli
