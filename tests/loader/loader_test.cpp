// khub::loader in a process without Python: modules referencing PyModule_Create2 load through the
// stub, with and without BIND_NOW; the stem/id check; what fails without the stub.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "khub/loader/loader.h"

namespace {
namespace fs = std::filesystem;
using namespace khub;
const fs::path kPlain = KHUB_PLAIN_DIR;

TEST(Loader, BindNowModuleNeedsTheStub) {
  // In a child (the stub, once loaded, cannot be unloaded from this process).
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (loader::process_has_python()) ::_exit(3);
    void* h = ::dlopen((kPlain / "now" / "_khub_plain_now_2222222.abi3.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    ::_exit(h == nullptr && std::string(dlerror()).find("PyModule_Create2") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "without the stub, a BIND_NOW module must fail on PyModule_Create2";
}

TEST(Loader, LoadsLazyAndBindNowModules) {
  EXPECT_FALSE(loader::process_has_python());
  for (auto [dir, id, value] : {std::tuple{"lazy", "_khub_plain_lazy_1111111", 1},
                                std::tuple{"now", "_khub_plain_now_2222222", 2}}) {
    auto m = loader::load_module(kPlain / dir, id);
    ASSERT_TRUE(m) << m.error().describe();
    EXPECT_TRUE(m->newly_loaded);
    auto fn = reinterpret_cast<int (*)()>(::dlsym(m->handle, "khub_plain_value"));
    ASSERT_NE(fn, nullptr);
    EXPECT_EQ(fn(), value);
    EXPECT_TRUE(loader::is_loaded(id));
  }
  EXPECT_NE(::dlsym(RTLD_DEFAULT, "PyModule_Create2"), nullptr);
  EXPECT_FALSE(loader::process_has_python()) << "the stub is not a Python";
  // Loading again returns the same handle.
  auto again = loader::load_module(kPlain / "lazy", "_khub_plain_lazy_1111111");
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->newly_loaded);
}

TEST(Loader, RejectsMismatchedStemAndMissingModule) {
  auto wrong = loader::load_module(kPlain / "wrong", "_khub_plain_wrong_3333333");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, ErrorCode::LoadFailed);
  EXPECT_NE(wrong.error().message.find("does not export PyInit__khub_plain_wrong_3333333"), std::string::npos);
  auto missing = loader::load_module(kPlain / "lazy", "_other_id");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::LoadFailed);
  ASSERT_FALSE(missing.error().notes.empty());
  EXPECT_NE(missing.error().notes[0].find("_khub_plain_lazy_1111111.abi3.so"), std::string::npos);
  EXPECT_FALSE(loader::load_module(kPlain / "lazy", "../x"));
}

TEST(Loader, ReadsTheMissingTorchShimFunction) {
  EXPECT_EQ(loader::missing_torch_symbol("/x/_k.abi3.so: undefined symbol: torch_exception_get_what"),
            "torch_exception_get_what");
  EXPECT_EQ(loader::missing_torch_symbol("/x/_k.abi3.so: undefined symbol: aoti_torch_get_data_ptr, version X"),
            "aoti_torch_get_data_ptr");
  EXPECT_FALSE(loader::missing_torch_symbol("/x/_k.abi3.so: undefined symbol: PyModule_Create2"));
  EXPECT_FALSE(loader::missing_torch_symbol("/x/_k.abi3.so: undefined symbol: _ZN3c105ErrorC1Ev"));
  EXPECT_FALSE(loader::missing_torch_symbol("libtorch_cpu.so: cannot open shared object file"));
}

// A module needing a C-shim function the process lacks: the error says the host torch is older than
// the variant needs, and keeps dlerror's text.
TEST(Loader, ModuleNeedingANewerTorchSaysSo) {
  auto m = loader::load_module(kPlain / "newer_torch", "_khub_plain_newer_4444444");
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, ErrorCode::LoadFailed);
  EXPECT_NE(m.error().message.find("the host torch is older than the variant needs"), std::string::npos)
      << m.error().describe();
  EXPECT_NE(m.error().message.find("torch_exception_get_what"), std::string::npos);
  ASSERT_EQ(m.error().notes.size(), 1u);
  EXPECT_EQ(m.error().notes[0].rfind("dlerror: ", 0), 0u);
  EXPECT_NE(m.error().notes[0].find("undefined symbol: torch_exception_get_what"), std::string::npos);
  EXPECT_FALSE(loader::is_loaded("_khub_plain_newer_4444444"));
}

TEST(Loader, StubDefinesTheListedSymbols) {
  ASSERT_TRUE(loader::ensure_python_symbols());
  for (const auto& s : loader::stub_symbols()) EXPECT_NE(::dlsym(RTLD_DEFAULT, s.c_str()), nullptr) << s;
}

}  // namespace
