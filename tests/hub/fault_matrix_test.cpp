// The download fault matrix (issue 32; docs/security.md, "Download fault matrix"): each fault at
// each stage of a download, once (a transient hiccup) and always (a server that keeps doing it),
// through the public API (download_files of a whole revision: the tree listing, then per file a
// HEAD and a GET with resume) into a fresh cache. Each ends in the right bytes or the expected clear
// error, the cache holds nothing partial or unverified afterwards, and a fault-free download into
// that same cache then succeeds.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <map>
#include <sstream>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/hub/cache_tree.h"
#include "khub/hub/download.h"
#include "khub/hub/lookup.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
using khub::test::FixtureHub;
using khub::test::TempDir;
namespace fs = std::filesystem;

enum class Fault { Drop, ServerError, RateLimit, WrongBytes, ShortBody, LongBody, Slow };
enum class Stage { Api, Redirect, Body, Resume };
enum class Mode { Once, Always };

const char* name(Fault f) {
  switch (f) {
    case Fault::Drop: return "Drop";
    case Fault::ServerError: return "Http503";
    case Fault::RateLimit: return "Http429";
    case Fault::WrongBytes: return "WrongBytes";
    case Fault::ShortBody: return "ShortBody";
    case Fault::LongBody: return "LongBody";
    case Fault::Slow: return "Slow";
  }
  return "?";
}
const char* name(Stage s) {
  switch (s) {
    case Stage::Api: return "Api";
    case Stage::Redirect: return "Redirect";
    case Stage::Body: return "Body";
    case Stage::Resume: return "Resume";
  }
  return "?";
}

void PrintTo(Fault f, std::ostream* os) { *os << name(f); }
void PrintTo(Stage s, std::ostream* os) { *os << name(s); }
void PrintTo(Mode m, std::ostream* os) { *os << (m == Mode::Once ? "once" : "always"); }

// Ok, or the error code the download must end with (`either`: ok or that error, both right).
struct Outcome {
  bool ok = true;
  ErrorCode code = ErrorCode::Network;
  bool either = false;
};
constexpr Outcome kOk{};
constexpr Outcome fails(ErrorCode c) { return {false, c}; }
constexpr Outcome ok_or(ErrorCode c) { return {false, c, true}; }

struct Expected2 {
  Outcome once, always;
};

// The matrix. "once": only the first matching answer is faulty; "always": every one is.
const std::map<std::pair<Fault, Stage>, Expected2>& matrix() {
  using E = ErrorCode;
  static const std::map<std::pair<Fault, Stage>, Expected2> m = {
      {{Fault::Drop, Stage::Api}, {kOk, fails(E::Network)}},
      {{Fault::Drop, Stage::Redirect}, {kOk, fails(E::Network)}},
      // Once: resumed. Always: every connection drops half-way through what is left, so each resume
      // brings half the rest; the resume budget (8, then 4 per MiB received) ends it with Network.
      {{Fault::Drop, Stage::Body}, {kOk, fails(E::Network)}},
      {{Fault::Drop, Stage::Resume}, {kOk, fails(E::Network)}},
      {{Fault::ServerError, Stage::Api}, {kOk, fails(E::Network)}},
      {{Fault::ServerError, Stage::Redirect}, {kOk, fails(E::Network)}},
      {{Fault::ServerError, Stage::Body}, {kOk, fails(E::Network)}},
      {{Fault::ServerError, Stage::Resume}, {kOk, fails(E::Network)}},
      {{Fault::RateLimit, Stage::Api}, {kOk, fails(E::RateLimited)}},
      {{Fault::RateLimit, Stage::Redirect}, {kOk, fails(E::RateLimited)}},
      {{Fault::RateLimit, Stage::Body}, {kOk, fails(E::RateLimited)}},
      {{Fault::RateLimit, Stage::Resume}, {kOk, fails(E::RateLimited)}},
      {{Fault::WrongBytes, Stage::Api}, {fails(E::Protocol), fails(E::Protocol)}},
      {{Fault::WrongBytes, Stage::Redirect}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::WrongBytes, Stage::Body}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::WrongBytes, Stage::Resume}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::ShortBody, Stage::Api}, {kOk, fails(E::Network)}},
      {{Fault::ShortBody, Stage::Redirect}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::ShortBody, Stage::Body}, {kOk, fails(E::Network)}},
      {{Fault::ShortBody, Stage::Resume}, {kOk, fails(E::Network)}},
      {{Fault::LongBody, Stage::Api}, {fails(E::Protocol), fails(E::Protocol)}},
      {{Fault::LongBody, Stage::Redirect}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::LongBody, Stage::Body}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::LongBody, Stage::Resume}, {fails(E::Integrity), fails(E::Integrity)}},
      {{Fault::Slow, Stage::Api}, {kOk, fails(E::Network)}},
      {{Fault::Slow, Stage::Redirect}, {kOk, fails(E::Network)}},
      // A 1.5 s stall mid-body is cut after download_timeout (500 ms here) of silence and resumed,
      // when curl's progress call (at least once a second) lands inside it; on a loaded machine a
      // stall may also be waited out. When every connection stalls, the resume budget ends the
      // download as for drops, or the waited-out stalls let it finish: both right.
      // docs/security.md, "Download fault matrix".
      {{Fault::Slow, Stage::Body}, {kOk, ok_or(E::Network)}},
      {{Fault::Slow, Stage::Resume}, {kOk, ok_or(E::Network)}},
  };
  return m;
}

constexpr std::size_t kLfsSize = 48 * 1024;
constexpr std::size_t kRegularSize = 12 * 1024;
constexpr int kStallMs = 1500;  // longer than the client's stall limit below (curl's low-speed time: 1 s)

std::string pattern(std::size_t n, unsigned seed) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + seed) & 0xff);
  return s;
}

using Param = std::tuple<Fault, Stage, Mode>;

class FaultMatrix : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    files_ = {{"big.bin", pattern(kLfsSize, 7)}, {"small.txt", pattern(kRegularSize, 3)}};
    commit_ = hub_.commit("org/matrix", "main",
                          {{"big.bin", {files_["big.bin"], true}}, {"small.txt", {files_["small.txt"], false}}});
  }

  ClientOptions options(const fs::path& cache, bool slow) const {
    auto o = test::fixture_options(hub_, cache);
    o.max_parallel_downloads = 1;  // files in tree order: big.bin (LFS, via the CDN), then small.txt
    o.retry.max_retries = 2;
    // The stall limit: curl's low-speed time is whole seconds (1 s here); API calls and HEADs also
    // have a total budget of 3 × etag_timeout.
    o.etag_timeout = std::chrono::milliseconds(slow ? 300 : 500);
    o.download_timeout = std::chrono::milliseconds(500);
    if (slow) {
      o.retry.max_retries = 1;        // each try costs a stall: keep "always" under 2 s
      o.max_parallel_downloads = 2;   // both files' stalls at once
    }
    return o;
  }

  test::Faults faults(Fault fault, Stage stage, Mode mode) const {
    test::Faults f;
    const int n = mode == Mode::Once ? 1 : 1000;
    switch (stage) {
      case Stage::Api:  // the tree listing
        f.match = "/api/";
        break;
      case Stage::Redirect:  // HEAD /resolve/: a 302 to the CDN (LFS) or the file's headers
        f.match = "/resolve/";
        f.method = "HEAD";
        break;
      case Stage::Body:  // the first GET of each file: the CDN (LFS) or /resolve/ (regular)
        f.method = "GET";
        f.skip = "/api/";
        break;
      case Stage::Resume:  // every first GET drops half-way; the fault hits the GET with Range
        f.method = "GET";
        f.skip = "/api/";
        f.ranged_only = true;
        f.prime_drop_after = kRegularSize / 2;
        break;
    }
    f.times = n;
    switch (fault) {
      case Fault::Drop: f.drop = true; break;
      case Fault::ServerError:
        f.fail_count = n;
        f.fail_status = 503;
        break;
      case Fault::RateLimit:
        f.fail_count = n;
        f.fail_status = 429;
        f.retry_after = "0";
        f.rate_limit = "\"api\";r=0;t=0";
        break;
      case Fault::WrongBytes: f.wrong_bytes = true; break;
      case Fault::ShortBody: f.short_body = 100; break;
      case Fault::LongBody: f.long_body = 100; break;
      case Fault::Slow: f.slow_ms = kStallMs; break;
    }
    return f;
  }

  Expected<std::vector<std::string>> download(const fs::path& cache, bool slow) {
    HubClient c(options(cache, slow));
    return download_files(c, repo_, commit_, {}, true);
  }

  // Nothing partial or unverified: blobs are named by the hash of what they hold, no .incomplete or
  // other temp file anywhere, every snapshot file is one of the repo's files with its exact bytes.
  void expect_cache_intact(const fs::path& cache) {
    const CacheLayout layout(cache);
    const fs::path repo_dir = layout.repo_dir(repo_);
    if (!fs::exists(repo_dir)) return;
    for (const auto& e : fs::recursive_directory_iterator(repo_dir)) {
      const fs::path rel = e.path().lexically_relative(repo_dir);  // not fs::relative: it follows links
      const std::string top = rel.begin()->string();
      const std::string file = e.path().filename().string();
      EXPECT_EQ(file.find(".incomplete"), std::string::npos) << rel;
      if (top == "blobs" && e.is_regular_file()) {
        const std::string bytes = test::slurp(e.path());
        const std::string sha256 = sha256_hex(bytes), sha1 = git_blob_sha1_hex(bytes);
        EXPECT_TRUE(file == sha256 || file == sha1) << "unverified blob " << rel << " [" << file << "] (" << bytes.size()
                                                    << " bytes, sha256 " << sha256 << ", git sha1 " << sha1 << ")";
      } else if (top == "snapshots" && (e.is_symlink() || e.is_regular_file())) {
        const std::string path = e.path().lexically_relative(repo_dir / "snapshots" / commit_).generic_string();
        ASSERT_TRUE(files_.count(path)) << "stray snapshot file " << rel;
        EXPECT_EQ(test::slurp(e.path()), files_[path]) << rel;
      } else if (top == ".staging") {  // where pointers and refs are made: empty between calls
        EXPECT_TRUE(e.is_directory()) << "left in staging: " << rel;
      } else if (top == "trees" && e.is_regular_file()) {  // the commit's listing, whole or not at all
        EXPECT_EQ(rel.generic_string(), "trees/" + commit_ + ".json");
        auto listing = read_tree_listing(layout, repo_, commit_);
        ASSERT_TRUE(listing) << "unreadable " << rel;
        EXPECT_EQ(listing->size(), files_.size()) << rel;
      } else if (top != "refs" && top != "blobs" && top != "snapshots" && top != "trees") {
        ADD_FAILURE() << "unexpected " << rel;
      }
    }
  }

  void expect_complete(const fs::path& cache) {
    const CacheLayout layout(cache);
    for (const auto& [path, bytes] : files_) {
      const fs::path p = layout.snapshot_file(repo_, commit_, path);
      EXPECT_EQ(test::slurp(p), bytes) << path;
    }
    EXPECT_EQ(fs::read_symlink(layout.snapshot_file(repo_, commit_, "big.bin")).filename().string(),
              sha256_hex(files_["big.bin"]));
    EXPECT_EQ(to_hex(*hash_file(layout.snapshot_file(repo_, commit_, "big.bin"), HashAlgorithm::Sha256)),
              sha256_hex(files_["big.bin"]));
  }

  FixtureHub hub_;
  TempDir dir_;
  std::string commit_;
  std::map<std::string, std::string> files_;
  RepoRef repo_{RepoType::Kernel, "org/matrix"};
};

TEST_P(FaultMatrix, EndsRightOrClearlyWithTheCacheIntact) {
  const auto [fault, stage, mode] = GetParam();
  const auto it = matrix().find({fault, stage});
  ASSERT_NE(it, matrix().end());
  const Outcome want = mode == Mode::Once ? it->second.once : it->second.always;
  const bool slow = fault == Fault::Slow;
  const fs::path cache = dir_.path() / "cache";

  hub_.set_faults(faults(fault, stage, mode));
  const auto start = std::chrono::steady_clock::now();
  auto got = download(cache, slow);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::ostringstream what;
  what << name(fault) << " at " << name(stage) << (mode == Mode::Once ? " once" : " always") << " ("
       << ms.count() << " ms): " << (got ? std::string("ok") : got.error().describe());
  RecordProperty("outcome", what.str());
  std::cout << "outcome: " << what.str() << "\n";
  if (want.ok && (stage == Stage::Body || stage == Stage::Resume) &&
      (fault == Fault::Drop || fault == Fault::ShortBody)) {  // finished by resuming, not by starting over
    int ranged = 0;
    for (const auto& r : hub_.requests()) ranged += r.method == "GET" && r.range.rfind("bytes=", 0) == 0;
    EXPECT_GT(ranged, 0);
  }
  if (want.ok || (want.either && got)) {
    ASSERT_TRUE(got) << what.str();
    expect_complete(cache);
  } else {
    ASSERT_FALSE(got) << what.str();
    EXPECT_EQ(got.error().code, want.code) << what.str() << "\n  expected " << to_string(want.code);
  }
  expect_cache_intact(cache);

  // The server recovers: the same cache completes.
  hub_.set_faults({});
  auto again = download(cache, false);
  ASSERT_TRUE(again) << again.error().describe();
  expect_complete(cache);
  expect_cache_intact(cache);
}

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [fault, stage, mode] = info.param;
  return std::string(name(fault)) + "_" + name(stage) + (mode == Mode::Once ? "_Once" : "_Always");
}

INSTANTIATE_TEST_SUITE_P(Downloads, FaultMatrix,
                         ::testing::Combine(::testing::Values(Fault::Drop, Fault::ServerError, Fault::RateLimit,
                                                              Fault::WrongBytes, Fault::ShortBody, Fault::LongBody,
                                                              Fault::Slow),
                                            ::testing::Values(Stage::Api, Stage::Redirect, Stage::Body,
                                                              Stage::Resume),
                                            ::testing::Values(Mode::Once, Mode::Always)),
                         case_name);

}  // namespace
