// Oracle: kernels-data (the Rust crate behind kernel-builder, via its Python binding) must accept and
// read every metadata.json khub accepts, reject what khub rejects, and hash variant trees the same.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"
#include "python_oracle.h"

namespace khub::protocol {
namespace {

namespace fs = std::filesystem;

class KernelsDataOracle : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("kernels_data")) GTEST_SKIP() << "kernels_data not importable from KHUB_PYTHON";
    dir_ = fs::temp_directory_path() / ("khub-kd-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(KernelsDataOracle, AgreesOnAcceptanceAndFields) {
  const std::vector<std::string> docs = {
      R"({"name":"relu","id":"_relu_cuda_abc1234","version":1,"license":"Apache-2.0","python-depends":[],"backend":{"type":"cuda"}})",
      R"({"name":"my-kernel","id":"_my_kernel_cuda_abc1234_dirty","version":3,"license":"MIT","python-depends":["einops"],"backend":{"type":"cuda","archs":["9.0a","10.0"]},"future":1})",
      R"({"name":"relu","id":"x","license":"A","python-depends":[],"backend":{"type":"cuda"}})",
      R"({"name":"relu","id":"x","version":1,"license":"A","backend":{"type":"cuda"}})",
      R"({"name":"Relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"}})",
      R"({"name":"relu","id":"x","version":-1,"license":"A","python-depends":[],"backend":{"type":"cuda"}})",
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"foo"}})",
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"digest":{"algorithm":"sha512","files":{"a":"b"}}})",
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"digest":{"algorithm":"md5","files":{}}})",
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"upstream":"ftp://x"})",
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"name":"x"})",
      "{\n  \"id\": \"x\",\n  \"version\": 1\n}",
  };
  std::string script = "import kernels_data as kd\n";
  for (std::size_t i = 0; i < docs.size(); ++i) {
    auto path = dir_ / ("m" + std::to_string(i) + ".json");
    std::ofstream(path, std::ios::binary) << docs[i];
    script += "try:\n  m = kd.Metadata.read_from_file(r'" + path.string() +
              "')\n  print('OK', str(m.name), m.id, m.version, m.license, str(m.backend.backend_type).lower(), "
              "m.backend.archs, m.digest.files if m.digest else None)\n"
              "except Exception as e:\n  print('ERR', str(e).split(': ', 1)[1].replace('\\n', ' '))\n";
  }
  auto r = khub::testing::run_python(script);
  ASSERT_EQ(r.status, 0);
  std::istringstream lines(r.output);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    auto mine = read_metadata(dir_ / ("m" + std::to_string(i) + ".json"));
    if (line.starts_with("OK")) {
      ASSERT_TRUE(mine) << docs[i] << "\n" << mine.error().message;
      std::string expect_prefix = "OK " + mine->name + " " + mine->id + " " + std::to_string(mine->version) + " " +
                                  mine->license + " " + std::string(to_string(mine->backend.type)) + " ";
      EXPECT_TRUE(line.starts_with(expect_prefix)) << line << " vs " << expect_prefix;
    } else {
      ASSERT_FALSE(mine) << docs[i];
      std::string text = mine.error().message;
      text = text.substr(text.find("`: ") + 3);  // after ``Cannot parse metadata from `"<path>"`: ``
      for (auto& c : text) {
        if (c == '\n') c = ' ';
      }
      // kernels-data 0.16 predates the `tpu` backend that the current crate (and khub) accept.
      if (auto tpu = text.find("`tpu`, "); tpu != std::string::npos) text.erase(tpu, 7);
      EXPECT_EQ(line, "ERR " + text) << docs[i];
    }
  }
}

// kernel-depends as the `kernels` 0.17 client reads it (kernels._rust; kernels-data 0.16 predates the
// key): both forms read alike, and every malformed entry fails with the same text and position.
TEST_F(KernelsDataOracle, KernelDependsAsKernelsReadsThem) {
  if (!khub::testing::python_has("kernels")) GTEST_SKIP() << "kernels not importable from KHUB_PYTHON";
  const std::string head = R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],)"
                           R"("backend":{"type":"cuda"},"kernel-depends":)";
  const std::vector<std::string> depends = {
      R"([{"repo-id":"org/a","version":2},{"repo-id":"org/b","revision":"main"}])",
      R"([])",
      R"([{"repo-id":"org/a","version":2,"revision":"main"}])",
      R"([{"repo-id":"org/a"}])",
      R"([{"repo-id":"org/a","version":2,"x":1}])",
      R"([{"version":2}])",
      R"([{"repo-id":"org/a","version":-1}])",
  };
  std::string script = "from kernels._rust import Metadata, KernelVersion\n";
  for (std::size_t i = 0; i < depends.size(); ++i) {
    auto path = dir_ / ("d" + std::to_string(i) + ".json");
    std::ofstream(path, std::ios::binary) << head + depends[i] + "}";
    script += "try:\n  m = Metadata.read_from_file(r'" + path.string() +
              "')\n  print('OK', ' '.join(d.repo_id + ('@v' + str(d.version.version) if isinstance(d.version, "
              "KernelVersion.Version) else '@' + d.version.revision) for d in m.kernel_depends))\n"
              "except Exception as e:\n  print('ERR', str(e).split('`: ', 1)[1].replace('\\n', ' '))\n";
  }
  auto r = khub::testing::run_python(script);
  ASSERT_EQ(r.status, 0) << r.output;
  std::istringstream lines(r.output);
  for (std::size_t i = 0; i < depends.size(); ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    auto mine = read_metadata(dir_ / ("d" + std::to_string(i) + ".json"));
    if (mine) {
      std::string ours = "OK ";
      for (const auto& d : mine->kernel_depends)
        ours += (ours.size() > 3 ? " " : "") + d.repo_id + "@" + (d.version ? "v" + std::to_string(*d.version) : *d.revision);
      if (mine->kernel_depends.empty()) ours = "OK ";
      EXPECT_EQ(line, ours) << depends[i];
    } else {
      std::string text = mine.error().message;
      EXPECT_EQ(line, "ERR " + text.substr(text.find("`: ") + 3)) << depends[i];
    }
  }
}

TEST_F(KernelsDataOracle, HashesTreesIdentically) {
  auto v = dir_ / "torch212-cxx11-cu130-x86_64-linux";
  fs::create_directories(v / "layers" / "__pycache__");
  std::ofstream(v / "__init__.py") << "from ._ops import ops\n";
  std::ofstream(v / "_ops.py") << "import torch\n";
  std::ofstream(v / "layers" / "__init__.py") << "";
  std::ofstream(v / "layers" / "metadata.json") << "nested";
  std::ofstream(v / "layers" / "__pycache__" / "x.cpython-311.pyc") << "bytecode";
  std::ofstream(v / "metadata.json") << "{}";
  std::ofstream(v / "blob.bin", std::ios::binary) << std::string(100000, '\x01') << "\xff\xfe";
  fs::create_symlink("_ops.py", v / "alias.py");
  for (auto algo : {DigestAlgorithm::Sha256, DigestAlgorithm::Sha512}) {
    auto mine = compute_digest(v, algo);
    ASSERT_TRUE(mine);
    std::string script = "import kernels_data as kd, json\nd = kd.Digest.hash_variant(kd.DigestAlgorithm." +
                         std::string(algo == DigestAlgorithm::Sha256 ? "SHA256" : "SHA512") + ", r'" + v.string() +
                         "')\nprint(json.dumps(d.files, sort_keys=True))\n";
    auto r = khub::testing::run_python(script);
    ASSERT_EQ(r.status, 0);
    std::string expected = "{";
    bool first = true;
    for (const auto& [k, h] : mine->files) {
      expected += std::string(first ? "" : ", ") + "\"" + k + "\": \"" + h + "\"";
      first = false;
    }
    expected += "}\n";
    EXPECT_EQ(r.output, expected);
  }
}

}  // namespace
}  // namespace khub::protocol
