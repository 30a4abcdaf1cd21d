// Downloads of files stored with Xet (docs/xet.md "Download") against the fixture Hub, whose "cdn"
// host is also its CAS: the file comes through reconstruction and xorb range reads, every chunk is
// checked against the file's Xet hash and the sha256, tokens stay on their hosts, and a CAS that
// fails or lies falls back to the whole-file URL without a wrong byte reaching the cache.
#include <gtest/gtest.h>

#include <random>

#include "fixture_hub.h"
#include "khub/base/hash.h"
#include "khub/hub/download.h"
#include "test_util.h"

namespace {
using namespace khub;
using namespace khub::hub;
using khub::test::FixtureHub;
using khub::test::TempDir;
namespace fs = std::filesystem;

const std::string kPath = "build/torch212-cxx11-cu130-x86_64-linux/_ops.so";
const std::string kHubToken = "hf_test_token_123456";

std::string random_bytes(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng());
  return s;
}

class XetDownloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    content_ = random_bytes(3'000'000, 7);  // ~46 chunks: a dozen xorbs and terms in the fixture
    hub_.require_token(kHubToken);
    commit_ = hub_.commit("org/xet", "main", {{kPath, {content_, true, true}}, {"README.md", {"hi\n"}}});
  }
  Expected<fs::path> fetch(const test::Faults& faults = {}) {
    hub_.set_faults(faults);
    auto o = test::fixture_options(hub_, dir_.path());
    o.token = kHubToken;
    HubClient c(o);
    return fetch_file(c, repo_, "main", kPath);
  }
  std::size_t count(const std::string& server, const std::string& path_part) const {
    std::size_t n = 0;
    for (const auto& r : hub_.requests()) n += r.server == server && r.path.find(path_part) != std::string::npos;
    return n;
  }
  FixtureHub hub_;
  TempDir dir_;
  std::string content_, commit_;
  RepoRef repo_{RepoType::Kernel, "org/xet"};
};

TEST_F(XetDownloadTest, ComesThroughTheCasWithEachTokenOnItsHost) {
  auto p = fetch();
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(test::slurp(*p), content_);
  EXPECT_EQ(fs::read_symlink(*p).filename().string(), sha256_hex(content_)) << "cached by sha256 as an LFS file";
  EXPECT_EQ(count("hub", "/xet-read-token/" + commit_), 1u);
  EXPECT_EQ(count("cdn", "/v1/reconstructions/"), 1u);
  EXPECT_GE(count("cdn", "/xorbs/"), 10u) << "one range read per xorb";
  EXPECT_EQ(count("cdn", "/blobs/"), 0u) << "the whole-file URL is not used";
  for (const auto& r : hub_.requests()) {
    if (r.server == "hub") {
      EXPECT_EQ(r.authorization, "Bearer " + kHubToken) << r.path;
    }
    if (r.path.find("/v1/reconstructions/") != std::string::npos) {
      EXPECT_EQ(r.authorization, "Bearer cas-fixture-token") << "the CAS gets its own token";
    }
    if (r.path.find("/xorbs/") != std::string::npos) {
      EXPECT_EQ(r.authorization, "") << "fetch URLs carry their own authorisation";
      EXPECT_NE(r.range.find('-'), std::string::npos);
    }
    EXPECT_EQ(r.server == "cdn" && r.authorization.find(kHubToken) != std::string::npos, false)
        << "the Hub token never leaves the Hub: " << r.path;
  }
}

TEST_F(XetDownloadTest, ADroppedRangeReadIsRetried) {
  test::Faults f;
  f.match = "/xorbs/";
  f.drop = true;
  f.times = 2;
  auto p = fetch(f);
  ASSERT_TRUE(p) << p.error().describe();
  EXPECT_EQ(test::slurp(*p), content_);
  EXPECT_EQ(count("cdn", "/blobs/"), 0u);
}

// Each way the CAS can fail or lie ends on the whole-file URL, with the right bytes.
TEST_F(XetDownloadTest, AFailingOrLyingCasFallsBackToTheWholeFile) {
  struct Case {
    const char* name;
    test::Faults faults;
  };
  std::vector<Case> cases;
  {
    test::Faults f;  // a changed byte in a record: its chunk hash breaks the file's Xet hash
    f.match = "/xorbs/";
    f.wrong_bytes = true;
    f.times = 1;
    cases.push_back({"corrupt record", f});
  }
  {
    test::Faults f;
    f.match = "/xorbs/";
    f.long_body = 100;
    f.times = 1;
    cases.push_back({"range read longer than asked", f});
  }
  {
    test::Faults f;
    f.match = "/v1/reconstructions/";
    f.fail_count = 100;
    f.fail_status = 404;
    cases.push_back({"no reconstruction", f});
  }
  {
    test::Faults f;
    f.match = "/v1/reconstructions/";
    f.garbage_json = true;
    cases.push_back({"reconstruction not JSON", f});
  }
  {
    test::Faults f;
    f.match = "/xet-read-token/";
    f.fail_count = 100;
    f.fail_status = 403;
    cases.push_back({"token refused", f});
  }
  {
    test::Faults f;
    f.match = "/xorbs/";
    f.fail_count = 100;
    f.fail_status = 403;
    cases.push_back({"fetch URL refused", f});
  }
  for (auto& c : cases) {
    SCOPED_TRACE(c.name);
    fs::remove_all(dir_.path());
    fs::create_directories(dir_.path());
    hub_.clear_requests();
    auto p = fetch(c.faults);
    ASSERT_TRUE(p) << p.error().describe();
    EXPECT_EQ(test::slurp(*p), content_);
    EXPECT_EQ(count("cdn", "/blobs/"), 1u) << "fell back to the whole-file URL";
  }
}

TEST_F(XetDownloadTest, WrongBytesFromEverySourceLeaveNothingInTheCache) {
  test::Faults f;  // every GET outside the API answers a changed first byte: the CAS and the bridge
  f.method = "GET";
  f.skip = "/api/";
  f.wrong_bytes = true;
  const auto both = f;
  auto p = fetch(both);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, ErrorCode::Integrity) << p.error().describe();
  for (const auto& e : fs::recursive_directory_iterator(dir_.path()))
    EXPECT_FALSE(e.is_regular_file() && e.path().string().find("/blobs/") != std::string::npos) << e.path();
}

}  // namespace
