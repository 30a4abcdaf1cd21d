// `khub variants` as a process: JSON shape, text output, exit codes 0 (chosen), 1 (none), 2 (bad input).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "run_process.h"

namespace khub::variants {
namespace {

using Json = nlohmann::json;

constexpr const char* kCuda128 = R"({"os": "linux", "cpu": "x86_64", "torch": "2.10", "cxx11_abi": true,
  "backend": "cuda", "backend_version": "12.8", "tvm_ffi": null, "macos": null})";
constexpr const char* kRocm71 = R"({"os": "linux", "cpu": "x86_64", "torch": "2.10", "cxx11_abi": true,
  "backend": "rocm", "backend_version": "7.1", "tvm_ffi": null, "macos": null})";
constexpr const char* kSetR =
    "# set R of resolve_test.cpp\n"
    "torch210-cxx11-cu128-x86_64-linux\ntorch210-cxx11-cu126-x86_64-linux\r\n"
    "torch210-cxx11-cu130-x86_64-linux\n\n  torch210-cxx11-rocm70-x86_64-linux  \ntorch210-cxx11-cpu-x86_64-linux\n"
    "torch210-cpu-aarch64-darwin\ntorch210-metal-aarch64-darwin\ntorch-cuda\ntorch-cpu\n";

class VariantsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = scratch_dir("variants-cli");
    write_text(dir_ / "cuda128.json", kCuda128);
    write_text(dir_ / "rocm71.json", kRocm71);
    write_text(dir_ / "set_r.txt", kSetR);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ProcessResult khub(const std::string& args, const std::string& env = "env -u KHUB_BACKEND") {
    return run_command(env + " " + quote(std::string(KHUB_BINARY_DIR) + "/bin/khub") + " variants " + args, dir_);
  }
  std::string path(const char* name) const { return quote((dir_ / name).string()); }

  std::filesystem::path dir_;
};

TEST_F(VariantsCli, JsonForAKnownHost) {
  ProcessResult r = khub("--host " + path("cuda128.json") + " --candidates " + path("set_r.txt") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["chosen"], "torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(j["loadable"], "torch210-cxx11-cu128-x86_64-linux");
  EXPECT_EQ(j["accepted"], Json({"torch210-cxx11-cu128-x86_64-linux", "torch210-cxx11-cu126-x86_64-linux",
                                 "torch-cuda"}));
  Json host = Json::parse(kCuda128);
  host["cuda_capability"] = nullptr;
  host["rocm_arch"] = nullptr;
  EXPECT_EQ(j["host"], host);
  ASSERT_EQ(j["trace"].size(), 9u);
  EXPECT_EQ(j["trace"][0], Json({{"variant", "torch210-cxx11-cu128-x86_64-linux"}, {"accepted", true},
                                 {"reason", nullptr}}));
  EXPECT_EQ(j["trace"][6], Json({{"variant", "torch210-cxx11-cu130-x86_64-linux"}, {"accepted", false},
                                 {"reason", "CUDA version (13.0) is not compatible with system CUDA version (12.8)"}}));
  EXPECT_EQ(j["trace"][8]["variant"], "torch-cpu");
}

TEST_F(VariantsCli, TextOutputNamesTheChoice) {
  ProcessResult r = khub("--host " + path("cuda128.json") + " --candidates " + path("set_r.txt") + " --trace");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("host: linux x86_64, torch 2.10, cxx11 abi yes, backend cu128"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chosen: torch210-cxx11-cu128-x86_64-linux\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  torch-cuda compatible \u2705\n"), std::string::npos) << r.out;
}

TEST_F(VariantsCli, NoVariantExitsOne) {
  ProcessResult r = khub("--host " + path("rocm71.json") + " --candidates " + path("set_r.txt") + " --json");
  EXPECT_EQ(r.exit_code, 1);
  Json j = Json::parse(r.out);
  EXPECT_TRUE(j["chosen"].is_null());
  EXPECT_EQ(j["accepted"], Json::array());
  EXPECT_EQ(j["trace"].size(), 9u);
  r = khub("--host " + path("rocm71.json") + " --candidates " + path("set_r.txt"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("chosen: none\ntrace:\n"), std::string::npos) << r.out;
}

TEST_F(VariantsCli, BackendOverrideByFlagAndEnvironment) {
  const std::string args = "--host " + path("cuda128.json") + " --candidates " + path("set_r.txt") + " --json";
  for (const ProcessResult& r : {khub(args + " --backend cpu"), khub(args, "env KHUB_BACKEND=cpu")}) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(Json::parse(r.out)["accepted"], Json({"torch210-cxx11-cpu-x86_64-linux", "torch-cpu"}));
    EXPECT_EQ(Json::parse(r.out)["host"]["backend"], "cpu");
  }
  ProcessResult bad = khub(args + " --backend xpu");
  EXPECT_EQ(bad.exit_code, 2);
  // With --json the error is also a JSON object on stdout, for scripts that parse stdout.
  auto error = Json::parse(bad.out)["error"];
  EXPECT_EQ(error["code"], "InvalidArgument");
  EXPECT_EQ(error["message"], "Invalid backend 'xpu', system supported backends: cpu, cuda");
  EXPECT_EQ(bad.err, "error: Invalid backend 'xpu', system supported backends: cpu, cuda\n");
}

TEST_F(VariantsCli, BadInputExitsTwoWithOneLine) {
  write_text(dir_ / "bad_names.txt", "torch-cuda\n# fine\ntorch210-cxx11-foo-x86_64-linux\n");
  write_text(dir_ / "bad_host.json", R"({"os": "linux"})");
  write_text(dir_ / "not_json.json", "{");
  const std::string host = " --host " + path("cuda128.json");
  const std::pair<std::string, std::string> cases[] = {
      {host + " --candidates " + path("missing.txt"),
       "error: cannot read candidates file '" + (dir_ / "missing.txt").string() + "'\n"},
      {host + " --candidates " + quote(dir_.string()),
       "error: cannot read candidates file '" + dir_.string() + "'\n"},
      {host + " --candidates " + path("bad_names.txt"),
       "error: " + (dir_ / "bad_names.txt").string() + ":3: Unknown backend variant string: 'foo'\n"},
      {" --host " + path("bad_host.json"),
       "error: " + (dir_ / "bad_host.json").string() + ": host json: missing key 'cpu'\n"},
      {" --host " + path("nope.json"), "error: cannot read host file '" + (dir_ / "nope.json").string() + "'\n"},
  };
  for (const auto& [args, err] : cases) {
    ProcessResult r = khub(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, err) << args;
    EXPECT_EQ(r.out, "") << args;
  }
  ProcessResult r = khub(" --host " + path("not_json.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("error: " + (dir_ / "not_json.json").string() + ": host json: not valid JSON: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(VariantsCli, DetectsThisMachineByDefault) {
  ProcessResult r = khub("--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["host"]["os"], "linux");
  const std::string torch = KHUB_BUILT_TORCH_VERSION;
  if (torch.empty()) {
    // Without torch only noarch builds fit: torch-cuda with a CUDA runtime, torch-cpu without one.
    EXPECT_TRUE(j["host"]["torch"].is_null());
    EXPECT_EQ(j["chosen"], j["host"]["backend"] == "cuda" ? "torch-cuda" : "torch-cpu");
    EXPECT_TRUE(j["loadable"].is_null());
  } else {
    // Built with LibTorch: the host runs that torch, so the stable-ABI build (Torch 2.10 or later)
    // or else its own arch build is chosen.
    const std::string cuda = KHUB_BUILT_TORCH_CUDA;
    std::string mm = torch.substr(0, torch.find('.')) + torch.substr(torch.find('.') + 1);
    std::string compute = cuda.empty() ? "cpu" : "cu" + cuda.substr(0, cuda.find('.')) + cuda.substr(cuda.find('.') + 1);
    EXPECT_EQ(j["host"]["torch"], torch);
    EXPECT_EQ(j["host"]["cxx11_abi"], true);
    const bool stable = std::stoi(mm) >= 210;
    EXPECT_EQ(j["chosen"], (stable ? "torch-stable-abi210-" : "torch" + mm + "-cxx11-") + compute + "-x86_64-linux");
  }
  for (const Json& d : j["trace"]) {
    if (!d["accepted"].get<bool>()) {
      EXPECT_FALSE(d["reason"].get<std::string>().empty());
    }
  }
}

}  // namespace
}  // namespace khub::variants
