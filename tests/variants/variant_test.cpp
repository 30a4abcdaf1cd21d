// Variant names: grammar, rendering and upstream's exact parse errors.
#include "khub/variants/variant.h"

#include <gtest/gtest.h>

#include "test_names.h"

namespace khub::variants {
namespace {

TEST(VariantNames, UpstreamListsRoundTrip) {
  for (const auto* list : {&variant_strings(), &stable_abi_variant_strings(), &noarch_variant_strings(),
                           &superset_variant_strings()}) {
    ASSERT_FALSE(list->empty());
    for (const std::string& name : *list) {
      Expected<Variant> v = parse_variant(name);
      ASSERT_TRUE(v) << name << ": " << v.error().message;
      EXPECT_EQ(v->name(), name);
    }
  }
}

TEST(VariantNames, TorchArchFields) {
  Variant v = *parse_variant("torch210-cxx11-cu128-x86_64-linux");
  ASSERT_TRUE(v.is_arch());
  EXPECT_EQ(v.arch->framework.kind, FrameworkKind::Torch);
  EXPECT_EQ(v.arch->framework.version, (Version{2, 10}));
  EXPECT_EQ(v.arch->framework.cxx11_abi, true);
  EXPECT_EQ(v.arch->backend, (Backend{BackendKind::Cuda, Version{12, 8}}));
  EXPECT_EQ(v.arch->cpu, "x86_64");
  EXPECT_EQ(v.arch->os, "linux");

  EXPECT_EQ(parse_variant("torch29-cxx98-cpu-x86_64-linux")->arch->framework.cxx11_abi, false);
  EXPECT_EQ(parse_variant("torch29-cu128-x86_64-windows")->arch->framework.cxx11_abi, std::nullopt);
  EXPECT_EQ(parse_variant("torch29-cu128-x86_64-windows")->arch->framework.version, (Version{2, 9}));
}

TEST(VariantNames, OtherFrameworks) {
  Variant abi = *parse_variant("torch-stable-abi211-cu128-x86_64-linux");
  EXPECT_EQ(abi.arch->framework.kind, FrameworkKind::TorchStableAbi);
  EXPECT_EQ(abi.arch->framework.version, (Version{2, 11}));
  EXPECT_EQ(parse_variant("torch-stable-abi29-cpu-x86_64-linux")->arch->framework.version, (Version{2, 9}));

  Variant tvm = *parse_variant("tvm-ffi01-cu130-x86_64-linux");
  EXPECT_EQ(tvm.arch->framework.kind, FrameworkKind::TvmFfi);
  EXPECT_EQ(tvm.arch->framework.version, (Version{0, 1}));
  EXPECT_EQ(parse_variant("tvm-ffi012-cpu-x86_64-linux")->arch->framework.version, (Version{0, 12}));

  Variant cuda = *parse_variant("torch-cuda");
  ASSERT_FALSE(cuda.is_arch());
  EXPECT_EQ(cuda.noarch->backend_name, "cuda");
  EXPECT_TRUE(parse_variant("torch-universal")->noarch->is_universal());
  EXPECT_EQ(parse_variant("torch-")->noarch->backend_name, "");
  EXPECT_EQ(parse_variant("torch-cuda-extra")->noarch->backend_name, "cuda-extra");
  // Upstream renders the bare `torch` as noarch with an empty backend name.
  EXPECT_EQ(parse_variant("torch")->name(), "torch-");
}

TEST(VariantNames, BackendTokens) {
  struct Case {
    const char* token;
    BackendKind kind;
    std::optional<Version> version;
    const char* name;
  };
  const Case cases[] = {
      {"cpu", BackendKind::Cpu, {}, "cpu"},           {"metal", BackendKind::Metal, {}, "metal"},
      {"neuron", BackendKind::Neuron, {}, "neuron"},  {"tpu", BackendKind::Tpu, {}, "tpu"},
      {"cu128", BackendKind::Cuda, Version{12, 8}, "cuda"}, {"cu130", BackendKind::Cuda, Version{13, 0}, "cuda"},
      {"cu12", BackendKind::Cuda, Version{1, 2}, "cuda"},   {"rocm70", BackendKind::Rocm, Version{7, 0}, "rocm"},
      {"rocm64", BackendKind::Rocm, Version{6, 4}, "rocm"}, {"rocm710", BackendKind::Rocm, Version{71, 0}, "rocm"},
      {"xpu20253", BackendKind::Xpu, Version{2025, 3}, "xpu"}, {"xpu20260", BackendKind::Xpu, Version{2026, 0}, "xpu"},
      {"cann83", BackendKind::Cann, Version{8, 3}, "cann"},
  };
  for (const Case& c : cases) {
    Expected<Backend> b = parse_backend(c.token);
    ASSERT_TRUE(b) << c.token;
    EXPECT_EQ(b->kind, c.kind) << c.token;
    EXPECT_EQ(b->version, c.version) << c.token;
    EXPECT_EQ(b->token(), c.token);
    EXPECT_EQ(b->name(), c.name);
  }
}

TEST(VariantNames, ParseOutcomesTable) {
  // Upstream's parse outcomes and error texts, with Python's repr() quoting.
  const std::pair<const char*, const char*> cases[] = {
      {"torch210-cxx11-cu128-x86_64", "Invalid arch variant parts: ['cu128', 'x86_64']"},
      {"torch210-cxx11-cu128-x86_64-linux-extra", "Invalid arch variant parts: ['cu128', 'x86_64', 'linux', 'extra']"},
      {"torch210-cxx03-cpu-x86_64-linux", "Invalid arch variant parts: ['cxx03', 'cpu', 'x86_64', 'linux']"},
      {"torch210-cxx11-foo-x86_64-linux", "Unknown backend variant string: 'foo'"},
      {"torch2-cpu-x86_64-linux", "Invalid Torch variant string: 'torch2'"},
      {"torch2-cxx11-cpu-x86_64-linux", "Invalid Torch variant string: 'torch2-cxx11'"},
      {"Torch210-cpu-x86_64-linux", "Unknown framework in variant string: 'Torch210-cpu-x86_64-linux'"},
      {"cuda-x86_64-linux", "Unknown framework in variant string: 'cuda-x86_64-linux'"},
      {"", "Unknown framework in variant string: ''"},
      {"tvm-ffi-cpu-x86_64-linux", "Invalid TvmFfi variant string: 'tvm-ffi'"},
      {"tvm-ffi1-cpu-x86_64-linux", "Invalid TvmFfi variant string: 'tvm-ffi1'"},
      {"tvm-cpu-x86_64-linux", "Unknown framework in variant string: 'tvm-cpu-x86_64-linux'"},
      {"torch-stable-abi2-cpu-x86_64-linux", "Invalid Torch stable ABI variant string: 'torch-stable-abi2'"},
      {"torch-stable-abi-cu128-x86_64-linux", "Invalid Torch stable ABI variant string: 'torch-stable-abi'"},
      {"torch-stable-abi211", "Invalid arch variant parts: []"},
      {"torch210-cxx11", "Invalid arch variant parts: []"},
      {"torch210-cuda-x86_64-linux", "Invalid CUDA variant string: 'cuda'"},
      {"torch210-cu1-x86_64-linux", "Invalid CUDA variant string: 'cu1'"},
      {"torch210-rocm-x86_64-linux", "Invalid ROCm variant string: 'rocm'"},
      {"torch210-xpu2025-3-x86_64-linux", "Invalid arch variant parts: ['xpu2025', '3', 'x86_64', 'linux']"},
      {"torch210-xpu-x86_64-linux", "Invalid XPU variant string: 'xpu'"},
      {"torch210-cann8x-aarch64-linux", "Invalid CANN variant string: 'cann8x'"},
      {"torch210-CPU-x86_64-linux", "Unknown backend variant string: 'CPU'"},
      {"torch210-it's-x86_64-linux", "Unknown backend variant string: \"it's\""},
      {"torch210-a\\b-x86_64-linux", "Unknown backend variant string: 'a\\\\b'"},
      {"torch210-a\tb-x86_64-linux", "Unknown backend variant string: 'a\\tb'"},
  };
  for (const auto& [name, message] : cases) {
    Expected<Variant> v = parse_variant(name);
    ASSERT_FALSE(v) << name << " parsed as " << v->name();
    EXPECT_EQ(v.error().code, ErrorCode::InvalidVariant);
    EXPECT_EQ(v.error().message, message) << name;
  }
}

TEST(VariantNames, LeadingZerosParseToTheCanonicalVersion) {
  // Python's Version("012.8") is 12.8 and variant_str prints it canonically; so does khub.
  EXPECT_EQ(parse_variant("torch2010-cu0128-x86_64-linux")->name(), "torch210-cu128-x86_64-linux");
  EXPECT_EQ(*parse_variant("torch2010-cu0128-x86_64-linux"), *parse_variant("torch210-cu128-x86_64-linux"));
}

TEST(VariantNames, OversizedNumbersAreRejectedNotWrapped) {
  Expected<Variant> v = parse_variant("torch210-cu12345678901-x86_64-linux");
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message, "Version number too large in variant string: 'cu12345678901'");
}

TEST(DottedVersion, Parse) {
  EXPECT_EQ(parse_dotted_version("2.12"), (Version{2, 12}));
  EXPECT_EQ(parse_dotted_version("2.12.1"), (Version{2, 12}));
  EXPECT_EQ(parse_dotted_version("13.0"), (Version{13, 0}));
  EXPECT_EQ(parse_dotted_version("2"), std::nullopt);
  EXPECT_EQ(parse_dotted_version("2.x"), std::nullopt);
  EXPECT_EQ(parse_dotted_version("2.12.rc1"), std::nullopt);
  EXPECT_EQ(parse_dotted_version(""), std::nullopt);
  EXPECT_EQ((Version{12, 8}).str(), "12.8");
}

}  // namespace
}  // namespace khub::variants
