// flake.nix at the top level parses as Nix and names kernel-builder; skipped (not passed) when
// nix-instantiate is not installed (Debian package nix-bin).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

TEST(Flake, ParsesWithNixInstantiate) {
  const std::string flake = (std::filesystem::path(KHUB_SOURCE_DIR) / "flake.nix").string();
  std::ifstream in(flake);
  ASSERT_TRUE(in) << flake << " is missing";
  std::stringstream text;
  text << in.rdbuf();
  for (const char* k : {"kernel-builder", "rmsnorm", "rope3d", "geglu", "adaln"})
    EXPECT_NE(text.str().find(k), std::string::npos) << "flake.nix does not mention " << k;
  if (std::system("command -v nix-instantiate >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "nix-instantiate not installed (apt-get install nix-bin); flake.nix not parsed";
  std::ostringstream cmd_text;
  cmd_text << "nix-instantiate --parse '" << flake << "' >/dev/null 2>&1";
  const std::string cmd = cmd_text.str();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}
