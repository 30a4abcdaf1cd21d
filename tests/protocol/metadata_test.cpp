#include "khub/protocol/metadata.h"

#include <gtest/gtest.h>

namespace khub::protocol {
namespace {

constexpr std::string_view kMinimal =
    R"({"name":"relu","id":"_relu_cuda_abc1234","version":1,"license":"Apache-2.0","python-depends":[],"backend":{"type":"cuda"}})";

std::string error_of(std::string_view json) {
  auto m = parse_metadata(json);
  EXPECT_FALSE(m) << json;
  return m ? "" : m.error().message;
}

// A small file nested 200,000 deep (600 KB) had overflowed the stack of every command that read it.
TEST(Metadata, DeepNestingIsAnErrorNotACrash) {
  for (const char* open_close : {"[]", "{}"}) {
    std::string deep = R"({"name":"relu","x":)";
    for (int i = 0; i < 200000; ++i) deep += open_close[0] == '[' ? "[" : "{\"a\":";
    deep += "1";
    for (int i = 0; i < 200000; ++i) deep += open_close[1];
    deep += "}";
    auto m = parse_metadata(deep);
    ASSERT_FALSE(m);
    EXPECT_EQ(m.error().code, ErrorCode::InvalidMetadata);
    EXPECT_NE(m.error().message.find("recursion limit"), std::string::npos) << m.error().message;
  }
  // 100 levels is still read (and then refused only for what it is: an unknown key is ignored).
  std::string ok(kMinimal);
  ok.insert(ok.size() - 1, R"(,"extra":)" + std::string(100, '[') + std::string(100, ']'));
  EXPECT_TRUE(parse_metadata(ok)) << ok;
}

TEST(Metadata, ParsesMinimalFile) {
  auto m = parse_metadata(kMinimal);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name, "relu");
  EXPECT_EQ(m->id, "_relu_cuda_abc1234");
  EXPECT_EQ(m->version, 1u);
  EXPECT_EQ(m->license, "Apache-2.0");
  EXPECT_EQ(m->backend.type, BackendType::Cuda);
  EXPECT_FALSE(m->backend.archs);
  EXPECT_FALSE(m->digest);
  EXPECT_TRUE(m->kernel_depends.empty());
  EXPECT_EQ(m->python_name(), "relu");
}

TEST(Metadata, IgnoresUnknownKeys) {
  auto m = parse_metadata(
      R"({"name":"my-kernel","id":"x","version":0,"license":"MIT","python-depends":["einops"],"backend":{"type":"rocm","archs":["gfx90a"],"x":1},"future":{"a":[1]}})");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->python_name(), "my_kernel");
  EXPECT_EQ(m->backend.archs, (std::vector<std::string>{"gfx90a"}));
  EXPECT_EQ(m->python_depends, (std::vector<std::string>{"einops"}));
}

// Texts and positions as kernels-data 0.16 reports them (checked against its Python binding).
TEST(Metadata, ErrorsMatchSerde) {
  EXPECT_EQ(error_of("{\n  \"id\": \"x\",\n  \"version\": 1\n}"), "missing field `name` at line 4 column 1");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":-1,"license":"A","python-depends":[],"backend":{"type":"cuda"}})"),
            "invalid value: integer `-1`, expected usize at line 1 column 36");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","license":"A","python-depends":[],"backend":{"type":"cuda"}})"),
            "missing field `version` at line 1 column 84");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{}})"),
            "missing field `type` at line 1 column 82");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"foo"}})"),
            "unknown variant `foo`, expected one of `cann`, `cpu`, `cuda`, `metal`, `neuron`, `rocm`, `tpu`, "
            "`xpu` at line 1 column 93");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"name":"x"})"),
            "duplicate field `name` at line 1 column 102");
  EXPECT_EQ(error_of(R"({"name":1})"), "invalid type: integer `1`, expected a string at line 1 column 9");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1.5,"license":"A","python-depends":[],"backend":{"type":"cuda"}})"),
            "invalid type: floating point `1.5`, expected usize at line 1 column 37");
  EXPECT_EQ(error_of(""), "EOF while parsing a value at line 1 column 0");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"upstream":"ftp://x"})"),
            "unsupported scheme `ftp` in git URL `ftp://x`, expected one of: https, http, git, ssh, git+ssh, "
            "git+https, git+http at line 1 column 117");
  EXPECT_EQ(error_of(R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"digest":{"algorithm":"md5","files":{}}})"),
            "unknown variant `md5`, expected `sha256` or `sha512` at line 1 column 123");
  EXPECT_TRUE(error_of(R"({"name":"Relu"})").starts_with("Invalid kernel name `Relu`. Name must:\n- Start with"));
  EXPECT_TRUE(error_of("{\"name\": ").starts_with("invalid JSON: "));
}

// Found by fuzz/metadata.cpp: a number beyond double made nlohmann throw out_of_range (not
// parse_error), which escaped parse_metadata and terminated the process.
TEST(Metadata, NumberBeyondDoubleIsAnErrorNotACrash) {
  EXPECT_TRUE(error_of(R"({"name":"geglu","inad": 66e655})").starts_with("invalid JSON: number out of range"));
  EXPECT_TRUE(error_of(R"({"name":"relu","id":"x","version":1e400})").starts_with("invalid JSON: "));
}

TEST(Metadata, KernelDependenciesNeedExactlyOneSelector) {
  std::string base = R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"kernel-depends":)";
  auto ok = parse_metadata(base + R"([{"repo-id":"a/b","version":2},{"repo-id":"c/d","revision":"main"}]})");
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->kernel_depends.size(), 2u);
  EXPECT_EQ(ok->kernel_depends[0].version, 2u);
  EXPECT_EQ(ok->kernel_depends[1].revision, "main");
  EXPECT_FALSE(parse_metadata(base + R"([{"repo-id":"a/b"}]})"));
  EXPECT_FALSE(parse_metadata(base + R"([{"repo-id":"a/b","version":1,"revision":"x"}]})"));
  auto unknown = parse_metadata(base + R"([{"repo-id":"a/b","version":1,"x":1}]})");
  ASSERT_FALSE(unknown);
  EXPECT_TRUE(unknown.error().message.starts_with("unknown field `x`, expected one of `repo-id`, `version`, `revision`"));
}

TEST(Metadata, ProvenanceLegacyShaBecomesCommit) {
  auto m = parse_metadata(
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"provenance":{"kernel-builder":{"version":"0.9"},"kernel":{"sha":"ABCDEF0123456789abcdef0123456789abcdef01","dirty":true}}})");
  ASSERT_TRUE(m) << m.error().message;
  ASSERT_TRUE(m->provenance && m->provenance->kernel);
  EXPECT_EQ(m->provenance->kernel->commit, "abcdef0123456789abcdef0123456789abcdef01");
  EXPECT_TRUE(m->is_dirty());
  EXPECT_NE(serialize_metadata(*m).find("\"commit\": \"abcdef0123456789abcdef0123456789abcdef01\""),
            std::string::npos);
  EXPECT_FALSE(parse_metadata(
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"provenance":{"kernel-builder":{"version":"0.9","commit":"abc","dirty":false}}})"));
  // kernel-builder's own provenance takes the older `sha` too (kernels-data reads it).
  auto builder = parse_metadata(
      R"({"name":"relu","id":"x","version":1,"license":"A","python-depends":[],"backend":{"type":"cuda"},"provenance":{"kernel-builder":{"version":"0.17.0","sha":"ABCDEF0123456789abcdef0123456789abcdef01","dirty":false}}})");
  ASSERT_TRUE(builder) << builder.error().message;
  EXPECT_EQ(builder->provenance->kernel_builder.commit, "abcdef0123456789abcdef0123456789abcdef01");
}

TEST(Metadata, SerializesSerdePretty) {
  KernelMetadata m;
  m.name = "rmsnorm";
  m.id = "_rmsnorm_cuda_0123abc";
  m.version = 1;
  m.license = "Apache-2.0";
  m.upstream = "https://github.com/x/y";
  m.backend = {BackendType::Cuda, std::vector<std::string>{"9.0a"}};
  m.digest = Digest{DigestAlgorithm::Sha256, {{"b.py", "B="}, {"__init__.py", "A="}}};
  m.provenance = Provenance{{"0.12.0", std::nullopt, std::nullopt}, SourceProvenance{std::string(40, 'a'), false}};
  const std::string expected = R"({
  "name": "rmsnorm",
  "id": "_rmsnorm_cuda_0123abc",
  "version": 1,
  "license": "Apache-2.0",
  "upstream": "https://github.com/x/y",
  "python-depends": [],
  "kernel-depends": [],
  "backend": {
    "type": "cuda",
    "archs": [
      "9.0a"
    ]
  },
  "digest": {
    "algorithm": "sha256",
    "files": {
      "__init__.py": "A=",
      "b.py": "B="
    }
  },
  "provenance": {
    "kernel-builder": {
      "version": "0.12.0"
    },
    "kernel": {
      "commit": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "dirty": false
    }
  }
})";
  EXPECT_EQ(serialize_metadata(m), expected);
  auto back = parse_metadata(expected);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, m);
}

TEST(Metadata, KernelNames) {
  for (auto ok : {"my-kernel", "relu2d", "a1", "my--kernel"}) EXPECT_TRUE(is_valid_kernel_name(ok)) << ok;
  for (auto bad : {"my_kernel", "MyKernel", "a", "my-kernel-", "-my-kernel", "1kernel", ""}) {
    EXPECT_FALSE(is_valid_kernel_name(bad)) << bad;
  }
}

TEST(Metadata, GitUrls) {
  for (auto ok : {"https://github.com/a/b", "git+ssh://git@x/y", "git@github.com:org/repo.git"}) {
    EXPECT_TRUE(validate_git_url(ok)) << ok;
  }
  for (auto bad : {"ftp://x", "git@github.com:/abs", "plain", "https://"}) EXPECT_FALSE(validate_git_url(bad)) << bad;
}

TEST(Metadata, ReadErrorsNameThePath) {
  auto missing = read_metadata("/nonexistent/metadata.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::Io);
  EXPECT_TRUE(missing.error().message.starts_with("Failed to open `\"/nonexistent/metadata.json\"`: "));
}

}  // namespace
}  // namespace khub::protocol
