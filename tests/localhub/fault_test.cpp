// Injected faults (--fault / config "faults") as client tests see them.
#include <chrono>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

class FaultTest : public ServerFixture {
 protected:
  std::string blob_;
  ServerConfig config() override {
    ServerConfig c;
    for (auto spec : {"GET /api/kernels/acme/relu/refs=503,count=1", "/api/kernels/acme/relu/revision/*=429:3,count=1",
                      "/api/kernels/acme/relu/tree/*=500,count=2", "GET */resolve/main/drop.bin=drop-mid-body,count=1",
                      "*/slow.bin=slow:200", "*/norange.bin=ignore-range", "HEAD */size.bin=wrong-size",
                      "HEAD */etag.bin=wrong-etag"}) {
      c.faults.push_back(*parse_fault(spec));
    }
    return c;
  }
  void SetUp() override {
    ServerFixture::SetUp();
    create_repo("kernel", "acme", "relu");
    blob_.assign(200000, 'b');
    for (size_t i = 0; i < blob_.size(); ++i) blob_[i] = static_cast<char>(i % 251);
    std::vector<std::pair<std::string, std::string>> files;
    for (auto name : {"drop.bin", "slow.bin", "norange.bin", "size.bin", "etag.bin"}) files.emplace_back(name, blob_);
    ASSERT_EQ(commit_files("kernels/acme/relu", "main", files)->status, 200);
  }
};

TEST_F(FaultTest, StatusFaultsFireCountTimes) {
  auto first = client_->Get("/api/kernels/acme/relu/refs");
  EXPECT_EQ(first->status, 503);
  EXPECT_EQ(first->get_header_value("X-Error-Code"), "ServiceUnavailable");
  EXPECT_EQ(make_client()->Get("/api/kernels/acme/relu/refs")->status, 200);
  EXPECT_EQ(make_client()->Get("/api/kernels/acme/relu/tree/main")->status, 500);
  EXPECT_EQ(make_client()->Get("/api/kernels/acme/relu/tree/main")->status, 500);
  EXPECT_EQ(make_client()->Get("/api/kernels/acme/relu/tree/main")->status, 200);
}

TEST_F(FaultTest, RateLimitCarriesRateLimitAndRetryAfter) {
  auto r = client_->Get("/api/kernels/acme/relu/revision/main");
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("RateLimit"), "\"api\";r=0;t=3");
  EXPECT_EQ(r->get_header_value("Retry-After"), "3");
  EXPECT_EQ(make_client()->Get("/api/kernels/acme/relu/revision/main")->status, 200);
}

TEST_F(FaultTest, DropMidBodyCutsTheConnection) {
  auto r = client_->Get("/kernels/acme/relu/resolve/main/drop.bin");
  EXPECT_TRUE(!r || r->body.size() < blob_.size());
  auto again = make_client()->Get("/kernels/acme/relu/resolve/main/drop.bin");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->body, blob_);
}

TEST_F(FaultTest, SlowIgnoreRangeWrongSizeWrongEtag) {
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(client_->Get("/kernels/acme/relu/resolve/main/slow.bin")->body, blob_);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));

  auto ranged = client_->Get("/kernels/acme/relu/resolve/main/norange.bin", {{"Range", "bytes=100-"}});
  EXPECT_EQ(ranged->status, 200);
  EXPECT_EQ(ranged->body.size(), blob_.size());

  auto size = client_->Head("/kernels/acme/relu/resolve/main/size.bin");
  EXPECT_EQ(size->get_header_value("Content-Length"), std::to_string(blob_.size() + 1));
  EXPECT_EQ(client_->Get("/kernels/acme/relu/resolve/main/size.bin")->body.size(), blob_.size());

  auto etag = client_->Head("/kernels/acme/relu/resolve/main/etag.bin");
  EXPECT_NE(etag->get_header_value("ETag"), "\"" + git_blob_sha1_hex(blob_) + "\"");
  EXPECT_EQ(client_->Head("/kernels/acme/relu/resolve/main/slow.bin")->get_header_value("ETag"),
            "\"" + git_blob_sha1_hex(blob_) + "\"");
}

}  // namespace
}  // namespace khub::localhub::testing
