#pragma once
// A throw-away kernel directory: <tmp>/kernel/build/<variant>/… with metadata.json files, for the
// publisher tests.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace khub::testing {

inline std::string minimal_metadata(const std::string& id = "_relu_cuda_abc1234", int version = 1) {
  return R"({"name":"relu","id":")" + id + R"(","version":)" + std::to_string(version) +
         R"(,"license":"Apache-2.0","python-depends":[],"backend":{"type":"cuda"}})";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class BuildFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::temp_directory_path() /
            ("khub-pub-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(build());
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  [[nodiscard]] std::filesystem::path kernel() const { return root_ / "kernel"; }
  [[nodiscard]] std::filesystem::path build() const { return root_ / "kernel" / "build"; }

  void write(const std::filesystem::path& rel, std::string_view data) {
    auto p = build() / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << data;
  }

  /// A variant with __init__.py and metadata.json (no digest).
  void add_variant(const std::string& name, const std::string& metadata = minimal_metadata()) {
    write(name + "/__init__.py", "from ._ops import ops\n");
    write(name + "/metadata.json", metadata);
  }

  void copy_in(const std::filesystem::path& from, const std::filesystem::path& rel) {
    std::filesystem::create_directories((build() / rel).parent_path());
    std::filesystem::copy_file(from, build() / rel, std::filesystem::copy_options::overwrite_existing);
  }

  std::filesystem::path root_;
};

}  // namespace khub::testing
