#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "khub/base/fs.h"
#include "khub/base/hash.h"

namespace khub::test {
namespace fs = std::filesystem;

TempDir::TempDir() {
  path_ = fs::temp_directory_path() / ("khub-test-" + std::to_string(::getpid()) + "-" + random_hex8());
  fs::create_directories(path_);
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

hub::ClientOptions fixture_options(const FixtureHub& hub, const fs::path& cache) {
  hub::ClientOptions o;
  o.endpoint = hub.endpoint();
  o.cache_dir = cache;
  o.retry.base = std::chrono::milliseconds(5);
  o.retry.max_wait = std::chrono::milliseconds(50);
  o.etag_timeout = std::chrono::milliseconds(5000);
  o.download_timeout = std::chrono::milliseconds(5000);
  o.telemetry = false;
  return o;
}

std::map<std::string, FixtureFile> sample_variant_files(const std::string& variant, const std::string& id,
                                                        std::size_t so_size) {
  std::string so(so_size, '\0');
  for (std::size_t i = 0; i < so.size(); ++i) so[i] = static_cast<char>((i * 131 + 7) & 0xff);
  std::map<std::string, std::string> files = {
      {"__init__.py", "from ._ops import ops\n"},
      {"_ops.py", "import torch\nops = torch.ops." + id + "\n"},
      {id + ".abi3.so", so},
      {"layers/__init__.py", "# layers\n"},
  };
  std::string digest;
  for (const auto& [path, content] : files) {
    Hasher h(HashAlgorithm::Sha256);
    h.update(content);
    auto raw = h.finish();
    digest += std::string(digest.empty() ? "" : ",") + "\"" + path + "\":\"" + base64_encode(raw) + "\"";
  }
  std::string metadata = "{\"name\":\"sample\",\"id\":\"" + id +
                         "\",\"version\":1,\"license\":\"Apache-2.0\",\"python-depends\":[],"
                         "\"backend\":{\"type\":\"cuda\"},\"digest\":{\"algorithm\":\"sha256\",\"files\":{" +
                         digest + "}}}";
  std::map<std::string, FixtureFile> out;
  for (auto& [path, content] : files) out["build/" + variant + "/" + path] = {content, path.ends_with(".so")};
  out["build/" + variant + "/metadata.json"] = {metadata, false};
  return out;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Run run_shell(const std::string& command) {
  Run r;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace khub::test
