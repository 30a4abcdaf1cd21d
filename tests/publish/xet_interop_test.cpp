// Oracle: huggingface_hub 2.4.0 with hf_xet (its default install; HF_HUB_DISABLE_XET unset) reads
// back byte for byte what `khub push` uploaded through Xet to the local Hub; and a re-push of a
// 64 MiB module with 1 % of its bytes changed in a few places sends at most 10 % of it.
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "../protocol/python_oracle.h"
#include "khub/base/hash.h"
#include "push_fixture.h"

namespace khub::publish {
namespace {

const std::string kVariant = "torch212-cxx11-cu130-x86_64-linux";

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::string out(n, '\0');
  std::uint64_t x = seed;
  for (auto& c : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    c = static_cast<char>(x >> 56);
  }
  return out;
}

class XetInterop : public khub::testing::PushFixture {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("hf_xet")) GTEST_SKIP() << "hf_xet not importable from KHUB_PYTHON";
    khub::testing::PushFixture::SetUp();
    ::unsetenv("HF_HUB_DISABLE_XET");
    ::setenv("HF_ENDPOINT", server_->url().c_str(), 1);
    ::setenv("HF_TOKEN", kToken, 1);
    ::setenv("HF_HOME", (root_ / "hf-home").c_str(), 1);
  }
  void TearDown() override {
    for (const char* name : {"HF_ENDPOINT", "HF_TOKEN", "HF_HOME"}) ::unsetenv(name);
    khub::testing::PushFixture::TearDown();
  }

  nlohmann::json push_json() {
    auto r = run_khub("push " + kernel().string() + " --repo " + kRepo + " --json");
    EXPECT_EQ(r.code, 0) << khub::testing::slurp(root_ / "stderr.txt");
    return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  }

  // Per path: whether huggingface_hub saw a Xet file, and the sha256 of what hf_hub_download wrote.
  std::string read_back(const std::vector<std::string>& paths) {
    std::string list;
    for (const auto& p : paths) list += "'" + p + "',";
    auto r = khub::testing::run_python(
        "import hashlib\n"
        "from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url\n"
        "for path in [" + list + "]:\n"
        "    meta = get_hf_file_metadata(hf_hub_url('" + std::string(kRepo) + "', path, repo_type='kernel', revision='v1'))\n"
        "    local = hf_hub_download('" + std::string(kRepo) + "', path, repo_type='kernel', revision='v1')\n"
        "    digest = hashlib.sha256(open(local, 'rb').read()).hexdigest()\n"
        "    print(path, 'xet' if meta.xet_file_data else 'plain', digest)\n");
    EXPECT_EQ(r.status, 0) << r.output;
    return r.output;
  }

  std::string expected_line(const std::string& path, const std::string& transfer) {
    return path + " " + transfer + " " + sha256_hex(khub::testing::slurp(kernel() / path)) + "\n";
  }
};

TEST_F(XetInterop, HfHubReadsWhatKhubPushedAndARepushSendsOnlyTheChange) {
  const std::size_t size = 64u << 20;
  add_variant(kVariant);
  copy_in(KHUB_FIXTURE_NS_GOOD, kVariant + "/_relu_cuda_abc1234.abi3.so");
  write(kVariant + "/lib.bin", random_bytes(size, 11));
  write(kVariant + "/small.bin", random_bytes(300 * 1024, 12));
  hash_all();
  auto first = push_json();
  ASSERT_EQ(first.value("status", ""), "uploaded") << first.dump();
  ASSERT_EQ(first["transfer"], "xet") << "khub serve offers Xet uploads";
  const std::string lib = "build/" + kVariant + "/lib.bin", small = "build/" + kVariant + "/small.bin";
  EXPECT_EQ(read_back({lib, small}), expected_line(lib, "xet") + expected_line(small, "xet"));

  // 1 % of the module changed, in four places.
  std::string data = khub::testing::slurp(build() / kVariant / "lib.bin");
  for (std::size_t p = 1; p <= 4; ++p) {
    for (std::size_t i = 0; i < size / 400; ++i) data[size / 5 * p + i] ^= 0x33;
  }
  write(kVariant + "/lib.bin", data);
  hash_all();
  auto again = push_json();
  ASSERT_EQ(again.value("status", ""), "uploaded") << again.dump();
  const auto sent = again["bytes_uploaded"].get<std::uint64_t>();
  std::printf("re-push of a 64 MiB file with 1 %% changed: %llu bytes sent, %llu deduplicated\n",
              static_cast<unsigned long long>(sent),
              static_cast<unsigned long long>(again["bytes_deduplicated"].get<std::uint64_t>()));
  EXPECT_LE(sent, size / 10);
  EXPECT_EQ(read_back({lib}), expected_line(lib, "xet"));

  auto unchanged = push_json();
  EXPECT_EQ(unchanged.value("status", ""), "no_changes");
  EXPECT_EQ(unchanged.value("bytes_uploaded", 1), 0);
}

}  // namespace
}  // namespace khub::publish
