// khub push through Xet against the local Hub (docs/publishing.md "Xet uploads"): chunks the CAS
// holds are not sent again, the CAS sees only the Xet token, and a failed upload commits nothing.
// A Hub that offers no Xet (here: the token route hidden, so the server answers 404) gets LFS.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <thread>

#include "khub/base/hash.h"
#include "push_fixture.h"

namespace khub::publish {
namespace {

const std::string kA = "torch212-cxx11-cu130-x86_64-linux";
const std::string kB = "torch212-cxx11-cu126-x86_64-linux";

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::string out(n, '\0');
  std::uint64_t x = seed;
  for (auto& c : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    c = static_cast<char>(x >> 56);
  }
  return out;
}

// `data` with 1 % of its bytes changed, in four places spread over it.
std::string one_percent_changed(std::string data) {
  const std::size_t run = data.size() / 400;
  for (std::size_t p = 1; p <= 4; ++p) {
    for (std::size_t i = 0; i < run; ++i) data[data.size() / 5 * p + i] ^= 0x5a;
  }
  return data;
}

class PushXet : public khub::testing::PushFixture {
 protected:
  // Two variants, each with a random `size`-byte native module stand-in.
  void make_build(std::size_t size) {
    for (const auto& v : {kA, kB}) {
      add_variant(v);
      write(v + "/_ops.py", "import torch\nops = torch.ops._relu_cuda_abc1234\n");
      copy_in(KHUB_FIXTURE_NS_GOOD, v + "/_relu_cuda_abc1234.abi3.so");
      write(v + "/lib.bin", random_bytes(size, v == kA ? 1 : 2));
    }
    hash_all();
  }

  // Pushes; skips the test while this khub serve offers no Xet uploads.
  Expected<PushResult> push_xet(const PushOptions& o) {
    auto r = push(o);
    if (r && r->status == "uploaded" && r->transfer != "xet") no_xet_ = true;
    return r;
  }

  // The sha256 of what the Hub serves for `path` on `rev` (following its redirect to LFS storage).
  std::string served(const std::string& rev, const std::string& path) {
    http::Request get;
    get.url = server_->url() + "/kernels/" + kRepo + "/resolve/" + rev + "/" + path;
    get.headers = {{"Authorization", std::string("Bearer ") + kToken}};
    get.max_body = std::size_t{256} << 20;
    auto curl = http::make_curl_transport();
    auto r = curl->perform(get);
    if (r && r->is_redirect()) {
      get.url = r->header("Location");
      get.headers.clear();  // a signed storage URL
      r = curl->perform(get);
    }
    EXPECT_TRUE(r) << r.error().message;
    EXPECT_EQ(r ? r->status : 0, 200) << get.url;
    return r ? sha256_hex(r->body) : std::string();
  }
  std::string sha256_of(const std::filesystem::path& rel) { return sha256_hex(khub::testing::slurp(build() / rel)); }

  bool no_xet_ = false;
};

// khub serve offers Xet: a push that fell back to LFS is a failure, not a reason to skip.
#define REQUIRE_XET() ASSERT_FALSE(no_xet_) << "khub serve offered no Xet upload; the push used LFS"

TEST_F(PushXet, FirstPushSendsEachChunkOnceAndTheHubServesTheFiles) {
  make_build(4u << 20);
  write(kA + "/same.bin", random_bytes(1u << 20, 3));  // one content under two paths: sent once
  write(kB + "/same.bin", random_bytes(1u << 20, 3));
  hash_all();
  auto r = push_xet(options());
  ASSERT_TRUE(r) << r.error().describe();
  REQUIRE_XET();
  EXPECT_EQ(r->status, "uploaded");
  EXPECT_EQ(transport_.count("/xet-write-token/v1"), 1);
  EXPECT_EQ(transport_.count("/info/lfs/objects/batch"), 0);
  EXPECT_EQ(transport_.put_bytes, 0u);
  EXPECT_GE(transport_.count("POST " + server_->url() + "/v1/xorbs/default/"), 1);
  EXPECT_EQ(transport_.count("/v1/shards"), 1);
  // Random bytes do not compress: each chunk goes up raw, with an 8-byte record header. The small
  // files (the modules too) go inline in the commit and count as sent.
  const std::uint64_t content = 2 * (4u << 20) + (1u << 20);
  const std::uint64_t small = 2 * std::filesystem::file_size(KHUB_FIXTURE_NS_GOOD) + 64 * 1024;
  EXPECT_GE(transport_.xorb_bytes, content);
  EXPECT_LT(transport_.xorb_bytes, content + small);
  EXPECT_GE(r->bytes_uploaded, transport_.xorb_bytes);
  EXPECT_LT(r->bytes_uploaded, content + small);
  EXPECT_EQ(r->bytes_deduplicated, 0u);  // the second same.bin is one object, sent once
  for (const auto& v : {kA, kB}) {
    for (const auto* name : {"lib.bin", "same.bin", "_relu_cuda_abc1234.abi3.so"}) {
      EXPECT_EQ(served("v1", "build/" + v + "/" + name), sha256_of(v + "/" + name)) << v << "/" << name;
    }
  }
  // The CAS is given the Xet token; the Hub token goes to the Hub's API alone.
  for (std::size_t i = 0; i < transport_.log.size(); ++i) {
    if (transport_.log[i].find(server_->url() + "/v1/") == std::string::npos) continue;
    EXPECT_FALSE(transport_.authorization[i].empty()) << transport_.log[i];
    EXPECT_EQ(transport_.authorization[i].find(kToken), std::string::npos) << transport_.log[i];
  }
}

TEST_F(PushXet, RepushSendsOnlyTheChangedChunks) {
  const std::size_t size = 16u << 20;
  make_build(size);
  auto first = push_xet(options());
  ASSERT_TRUE(first) << first.error().describe();
  REQUIRE_XET();
  EXPECT_GE(first->bytes_uploaded, 2 * size);

  auto same = push(options());
  ASSERT_TRUE(same) << same.error().describe();
  EXPECT_EQ(same->status, "no_changes");
  EXPECT_EQ(same->bytes_uploaded, 0u);

  const std::string changed = one_percent_changed(khub::testing::slurp(build() / kA / "lib.bin"));
  write(kA + "/lib.bin", changed);
  hash_all();
  const auto xorbs_before = transport_.xorb_bytes;
  auto again = push(options());
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_EQ(again->status, "uploaded");
  EXPECT_EQ(again->files_uploaded, 2u);  // lib.bin and metadata.json (its digest)
  EXPECT_LE(transport_.xorb_bytes - xorbs_before, size / 10) << "at most 10 % of the file is sent";
  EXPECT_LE(again->bytes_uploaded, size / 10);
  EXPECT_GE(again->bytes_deduplicated, size * 9 / 10);
  EXPECT_EQ(served("v1", "build/" + kA + "/lib.bin"), sha256_hex(changed));
}

// A CAS without the global-dedup query: the file a push replaces is read back through its
// reconstruction instead, and the bar holds all the same.
TEST_F(PushXet, WithoutGlobalDedupTheReplacedFileIsReadBack) {
  const std::size_t size = 16u << 20;
  make_build(size);
  transport_.hide_global_dedup = true;
  auto first = push_xet(options());
  ASSERT_TRUE(first) << first.error().describe();
  REQUIRE_XET();
  const std::string changed = one_percent_changed(khub::testing::slurp(build() / kB / "lib.bin"));
  write(kB + "/lib.bin", changed);
  hash_all();
  auto again = push(options());
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_GE(transport_.count("/v1/reconstructions/"), 1);
  EXPECT_GT(transport_.range_bytes, size / 2) << "the old version was read back";
  EXPECT_LE(again->bytes_uploaded, size / 10);
  EXPECT_EQ(served("v1", "build/" + kB + "/lib.bin"), sha256_hex(changed));
}

// A file rewritten whole shares nothing with the version it replaces: after the first MiB of that
// version, read back to look, nothing more is downloaded.
TEST_F(PushXet, ARewrittenFileIsNotReadBack) {
  const std::size_t size = 16u << 20;
  make_build(size);
  transport_.hide_global_dedup = true;
  auto first = push_xet(options());
  ASSERT_TRUE(first) << first.error().describe();
  REQUIRE_XET();
  write(kA + "/lib.bin", random_bytes(size, 99));
  hash_all();
  auto again = push(options());
  ASSERT_TRUE(again) << again.error().describe();
  EXPECT_GE(again->bytes_uploaded, size);
  EXPECT_LE(transport_.range_bytes, 1u << 20);
  EXPECT_EQ(served("v1", "build/" + kA + "/lib.bin"), sha256_of(kA + "/lib.bin"));
}

// Every xorb upload fails (after the retries): nothing is committed, and the branch the push made
// goes again.
class PushXetFailing : public PushXet {
 protected:
  localhub::ServerConfig config() const override {
    auto c = PushXet::config();
    c.faults.push_back(localhub::parse_fault("POST /v1/xorbs/*=500,count=1000").value());
    return c;
  }
};

TEST_F(PushXetFailing, AFailedXorbUploadCommitsNothing) {
  make_build(1u << 20);
  auto r = push(options());
  ASSERT_FALSE(r && r->transfer != "xet") << "khub serve offered no Xet upload; the push used LFS";
  ASSERT_FALSE(r);
  const std::string described = r.error().describe();
  EXPECT_NE(described.find("/v1/xorbs/default/"), std::string::npos) << described;
  EXPECT_NE(described.find("the new branch `v1` was deleted again"), std::string::npos) << described;
  EXPECT_EQ(transport_.count("/v1/shards"), 0);
  EXPECT_EQ(transport_.count("/commit/v1"), 0);
  auto repo = server_->store().find_repo({localhub::RepoType::Kernel, "khub-test", "relu"});
  ASSERT_TRUE(repo);
  EXPECT_FALSE(server_->store().resolve_revision(*repo, "v1"));
}

// One read per large file: the check takes the 16 MiB files' sha256 from the digest (they were
// written before metadata.json) and the Xet scan hashes them while chunking them. Before, the check
// and the plan read them through hash_file first.
TEST_F(PushXet, LargeFilesAreReadOnceByTheirUpload) {
  const std::size_t size = 16u << 20;
  make_build(size);
  const auto before = hash_file_bytes_read();
  auto r = push_xet(options());
  ASSERT_TRUE(r) << r.error().describe();
  REQUIRE_XET();
  EXPECT_LT(hash_file_bytes_read() - before, size) << "a large file was hashed apart from its upload";
  for (const auto& v : {kA, kB})
    EXPECT_EQ(served("v1", "build/" + v + "/lib.bin"), sha256_of(v + "/lib.bin")) << v;
}

// A claim that does not hold: lib.bin rewritten, then metadata.json put back as it was (so the file
// is older than the digest that names the old bytes). Whichever way the push would read the file —
// its Xet scan, an LFS upload, an unchanged file's confirmation, a dry run — it stops with the
// digest check's text, before the shard and the commit.
class PushXetClaims : public PushXet {
 protected:
  void break_claim(const std::string& variant) {
    const auto metadata = khub::testing::slurp(build() / variant / "metadata.json");
    write(variant + "/lib.bin", random_bytes(16u << 20, 77));
    write(variant + "/metadata.json", metadata);
  }
  void expect_digest_error(const Expected<PushResult>& r) {
    ASSERT_FALSE(r) << "the push took a file that does not match its digest";
    const std::string described = r.error().describe();
    EXPECT_EQ(r.error().code, ErrorCode::InvalidMetadata) << described;
    EXPECT_NE(described.find(kA + ": File hash mismatch for lib.bin: expected: "), std::string::npos) << described;
    EXPECT_NE(described.find("khub hash"), std::string::npos) << described;
  }
};

TEST_F(PushXetClaims, AStaleDigestStopsTheXetUploadBeforeItsShard) {
  make_build(16u << 20);
  break_claim(kA);
  const auto r = push(options());
  expect_digest_error(r);
  EXPECT_EQ(transport_.count("/v1/shards"), 0);
  EXPECT_EQ(transport_.count("/commit/v1"), 0);
  if (!r) {
    EXPECT_NE(r.error().describe().find("the new branch `v1` was deleted again"), std::string::npos);
  }
}

TEST_F(PushXetClaims, AStaleDigestStopsTheLfsUploadBeforeItsBatch) {
  make_build(16u << 20);
  break_claim(kA);
  transport_.hide_xet = true;
  expect_digest_error(push(options()));
  EXPECT_EQ(transport_.count("/info/lfs/objects/batch"), 0);
  EXPECT_EQ(transport_.count("/commit/v1"), 0);
}

TEST_F(PushXetClaims, AStaleDigestOfAnUnchangedFileIsNotTakenForNoChanges) {
  make_build(16u << 20);
  auto first = push_xet(options());
  ASSERT_TRUE(first) << first.error().describe();
  break_claim(kA);  // the digest still names the pushed bytes: the plan would skip the file
  const auto commits = transport_.count("/commit/v1");
  expect_digest_error(push(options()));
  EXPECT_EQ(transport_.count("/commit/v1"), commits);
}

// A digest entry that is no sha256 at all is never a claim: the check compares it and fails.
TEST_F(PushXetClaims, AMalformedDigestEntryIsNoClaim) {
  make_build(16u << 20);
  auto metadata = khub::testing::slurp(build() / kA / "metadata.json");
  const auto entry = metadata.find("\"lib.bin\": \"");
  ASSERT_NE(entry, std::string::npos) << metadata;
  const auto value = entry + std::string("\"lib.bin\": \"").size();
  metadata.replace(value, metadata.find('"', value) - value, "AAAA");
  write(kA + "/metadata.json", metadata);
  const auto r = push(options());
  ASSERT_FALSE(r) << "a build whose digest names lib.bin by \"AAAA\" was pushed";
  EXPECT_NE(r.error().describe().find("File hash mismatch for lib.bin: expected: AAAA"), std::string::npos)
      << r.error().describe();
  EXPECT_EQ(transport_.requests, 0);
}

// The usual stale build — a module rebuilt after `khub hash` — is not claimed: it fails in the
// check, before the first request, as a small file does.
TEST_F(PushXetClaims, AFileWrittenAfterItsDigestFailsBeforeAnyRequest) {
  make_build(16u << 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the file system's clock tick
  write(kA + "/lib.bin", random_bytes(16u << 20, 78));
  expect_digest_error(push(options()));
  EXPECT_EQ(transport_.requests, 0);
}

TEST_F(PushXetClaims, AStaleDigestFailsADryRun) {
  make_build(16u << 20);
  break_claim(kA);
  auto o = options();
  o.dry_run = true;
  expect_digest_error(push(o));
}

TEST_F(PushXet, AHubWithoutXetGetsLfs) {
  make_build(200 * 1024);
  transport_.hide_xet = true;
  auto r = push(options());
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->transfer, "lfs");
  EXPECT_EQ(transport_.count("/xet-write-token/v1"), 1) << "asked once per push";
  EXPECT_GE(transport_.count("/info/lfs/objects/batch"), 1);
  EXPECT_EQ(transport_.count("/v1/xorbs/"), 0);
  EXPECT_EQ(transport_.put_bytes, 2u * 200 * 1024);
  EXPECT_EQ(served("v1", "build/" + kA + "/lib.bin"), sha256_of(kA + "/lib.bin"));
}

}  // namespace
}  // namespace khub::publish
