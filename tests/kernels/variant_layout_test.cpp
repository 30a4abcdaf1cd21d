// The variant dirs themselves: files, id, metadata.json bytes, PyInit.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>

#include "kernel_test_support.h"

namespace khub_test {
namespace {

namespace fs = std::filesystem;

const char* const kVariantDirs[] = {
#include "kernel_variants.inc"
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(VariantLayout, EveryVariantDirHasKernelBuilderLayout) {
  ASSERT_GT(std::size(kVariantDirs), 0u);
  for (const char* d : kVariantDirs) {
    const fs::path dir(d);
    SCOPED_TRACE(d);
    const std::string variant = dir.filename().string();
    const std::string kernel = dir.parent_path().parent_path().filename().string();
    const std::string text = read_file(dir / "metadata.json");
    ASSERT_FALSE(text.empty());
    EXPECT_NE(text.back(), '\n') << "metadata.json must not end with a newline";
    const auto meta = nlohmann::ordered_json::parse(text);
    const std::string id = meta.at("id");
    const std::string backend = meta.at("backend").at("type");
    EXPECT_EQ(meta.at("name"), kernel);
    // A stable-ABI build has its own id (`_stable_`), so both builds load into one process; a tvm-ffi
    // build too (`_tvm_ffi_`, its .so stem).
    const bool stable = variant.rfind("torch-stable-abi", 0) == 0;
    const bool tvm_ffi = variant.rfind("tvm-ffi", 0) == 0;
    EXPECT_TRUE(std::regex_match(
        id, std::regex("_" + kernel + "_(cpu|cuda)_" + (stable ? "stable_" : tvm_ffi ? "tvm_ffi_" : "") +
                       "([0-9a-f]{7}(_dirty)?|[a-z2-7]{13})")))
        << id;
    EXPECT_EQ(id.rfind("_" + kernel + "_" + backend + "_", 0), 0u);
    // The backend token follows the framework (torch212-cxx11, torch-stable-abi210 or tvm-ffi01).
    std::smatch m;
    ASSERT_TRUE(std::regex_match(variant, m,
                                 std::regex("(torch[0-9]+-cxx11|torch-stable-abi[0-9]+|tvm-ffi[0-9]+)-(cpu|cu[0-9]+)-[^-]+-[^-]+")))
        << variant;
    EXPECT_EQ(m[2].str() == "cpu", backend == "cpu") << variant;
    if (backend == "cuda") {
      EXPECT_EQ(meta.at("backend").at("archs"), nlohmann::ordered_json::array({"9.0+PTX"}));
    }
    // serde_json pretty printing (keys in kernels-data's order): re-serialising with a 2-space indent
    // gives the same bytes.
    EXPECT_EQ(meta.dump(2), text);
    // tvm-ffi builds ask Python's kernels to check that apache-tvm-ffi is installed (python_depends.json).
    EXPECT_EQ(meta.at("python-depends"),
              tvm_ffi ? nlohmann::ordered_json::array({"tvm-ffi"}) : nlohmann::ordered_json::array());
    EXPECT_EQ(meta.at("kernel-depends"), nlohmann::ordered_json::array());
    EXPECT_TRUE(fs::exists(dir / "__init__.py"));
    if (tvm_ffi) {  // kernel-builder's templates/tvm_ffi/_ops.py.in; a plain shared library, no PyInit
      EXPECT_NE(read_file(dir / "_ops.py").find("ops = tvm_ffi.load_module(_SELF_PATH / \"" + id + ".so\")\n"),
                std::string::npos);
      EXPECT_TRUE(fs::exists(dir / (id + ".so")));
    } else {
      EXPECT_NE(read_file(dir / "_ops.py").find("ops = torch.ops." + id + "\n"), std::string::npos);
      EXPECT_TRUE(fs::exists(dir / (id + ".abi3.so")));
    }
    int so_count = 0;
    for (const auto& e : fs::directory_iterator(dir)) so_count += e.path().extension() == ".so";
    EXPECT_EQ(so_count, 1) << "exactly one native module";
  }
}

TEST(VariantLayout, ModulesExportPyInitAndRegisterTheirNamespace) {
  for (const char* d : kVariantDirs) {
    const std::string dir(d);
    if (dir.find(std::string("-") + (on_cuda() ? "cu" : "cpu")) == std::string::npos) continue;
    if (fs::path(dir).filename().string().rfind("tvm-ffi", 0) == 0) continue;  // no torch ops (tests/ffi)
    SCOPED_TRACE(d);
    const std::string id = load_variant(dir);
    void* h = dlopen((dir + "/" + id + ".abi3.so").c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    EXPECT_NE(dlsym(h, ("PyInit_" + id).c_str()), nullptr);
    const auto ops = c10::Dispatcher::singleton().getAllOpNames();
    int in_ns = 0;
    for (const auto& o : ops) in_ns += o.name.rfind(id + "::", 0) == 0;
    EXPECT_GT(in_ns, 0) << "no ops registered in namespace " << id;
    dlclose(h);
  }
}

#ifdef KHUB_VARIANT_RMSNORM_CUDA
TEST(VariantLayout, CudaVariantAlsoServesCpuTensors) {
  const std::string id = load_variant(KHUB_VARIANT_RMSNORM_CUDA);
  auto f = op<at::Tensor(const at::Tensor&, const std::optional<at::Tensor>&, double)>(id, "rms_norm");
  const auto x = at::randn({3, 256}, at::kBFloat16);
  const auto y = f.call(x, std::nullopt, 1e-6);
  const auto xd = x.to(at::kDouble);
  expect_close(y, xd * at::rsqrt(xd.pow(2).mean(-1, true) + 1e-6), at::kBFloat16, "cuda variant on cpu");
}
#endif

}  // namespace
}  // namespace khub_test
