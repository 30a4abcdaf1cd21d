// The Xet CAS of `khub serve` (localhub/src/routes_cas.cpp, routes_xet_token.cpp) with real xorbs
// and shards built by khub::xet: token endpoints and scopes, xorb and shard checks, commits of
// Xet-uploaded files, resolve and tree headers, reconstruction of whole files and sub-ranges from
// the signed fetch URLs, the fallback routes, and garbage collection of xorbs.
#include <chrono>
#include <random>
#include <thread>

#include "test_support.h"
#include "xet_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (auto& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

class XetCasTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.tokens.push_back(TokenGrant{"hf_w", "alice", true, {}, {"alice"}});
    c.tokens.push_back(TokenGrant{"hf_r", "reader", false, {}, {}});
    c.tokens.push_back(TokenGrant{"hf_bob", "bob", true, {}, {"bob"}});
    return c;
  }
  void SetUp() override {
    ServerFixture::SetUp();
    ASSERT_EQ(create_repo("model", "alice", "data", "hf_w")->status, 200);
  }

  /// A Xet token from the Hub route; empty when it is refused.
  std::string xet_token(const std::string& hub_token, bool write, const std::string& repo = "models/alice/data",
                        int* status = nullptr) {
    auto r = client_->Get("/api/" + repo + "/xet-" + (write ? "write" : "read") + "-token/main", auth(hub_token));
    if (status) *status = r ? r->status : 0;
    if (!r || r->status != 200) return {};
    return json::parse(r->body)["accessToken"].get<std::string>();
  }

  httplib::Result post_xorb(const std::string& token, const BuiltXorb& x, const std::string& name = "") {
    return client_->Post("/v1/xorbs/default/" + (name.empty() ? x.hash.str() : name), auth(token), x.records,
                         "application/octet-stream");
  }
  httplib::Result post_shard(const std::string& token, const std::string& body) {
    return client_->Post("/v1/shards", auth(token), body, "application/octet-stream");
  }
  /// Uploads every xorb, then the shard; both must be accepted.
  void upload(const std::string& token, const XetUpload& up) {
    for (const auto& x : up.xorbs) {
      auto r = post_xorb(token, x);
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
    }
    auto r = post_shard(token, up.shard_body());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }
  httplib::Result commit_lfs(const std::string& path, const std::string& content, const std::string& repo = "models/alice/data",
                             const std::string& token = "hf_w") {
    std::string body = json{{"key", "header"}, {"value", {{"summary", "xet"}}}}.dump() + "\n" +
                       json{{"key", "lfsFile"},
                            {"value", {{"path", path}, {"algo", "sha256"}, {"oid", sha256_hex(content)}, {"size", content.size()}}}}
                           .dump() + "\n";
    return client_->Post("/api/" + repo + "/commit/main", auth(token), body, "application/x-ndjson");
  }
};

TEST_F(XetCasTest, TokenRouteAnswersHeadersAndBodyForTheRightCallers) {
  auto r = client_->Get("/api/models/alice/data/xet-write-token/main?create_pr=1", auth("hf_w"));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  const std::string cas = "http://127.0.0.1:" + std::to_string(server_->port());
  EXPECT_EQ(j["casUrl"], cas);
  EXPECT_EQ(r->get_header_value("X-Xet-Cas-Url"), cas);
  EXPECT_EQ(r->get_header_value("X-Xet-Access-Token"), j["accessToken"].get<std::string>());
  EXPECT_EQ(r->get_header_value("X-Xet-Token-Expiration"), std::to_string(j["exp"].get<std::int64_t>()));
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(j["exp"].get<double>(), static_cast<double>(now + 3600), 5.0);

  int status = 0;
  EXPECT_FALSE(xet_token("hf_r", false).empty());          // read: any reader of the repo
  EXPECT_FALSE(xet_token("", false).empty());              // anonymous_read
  EXPECT_TRUE(xet_token("hf_r", true, "models/alice/data", &status).empty());
  EXPECT_EQ(status, 403);                                  // a read token asks to write
  EXPECT_TRUE(xet_token("hf_bob", true, "models/alice/data", &status).empty());
  EXPECT_EQ(status, 403);                                  // another namespace
  EXPECT_TRUE(xet_token("", true, "models/alice/data", &status).empty());
  EXPECT_EQ(status, 401);
  EXPECT_TRUE(xet_token("hf_nope", false, "models/alice/data", &status).empty());
  EXPECT_EQ(status, 401);
  EXPECT_TRUE(xet_token("hf_w", false, "models/alice/missing", &status).empty());
  EXPECT_EQ(status, 404);
  ASSERT_EQ(create_repo("model", "alice", "secret", "hf_w", true)->status, 200);
  EXPECT_TRUE(xet_token("", false, "models/alice/secret", &status).empty());
  EXPECT_EQ(status, 401);
}

TEST_F(XetCasTest, UploadCommitResolveTreeAndRangesRoundTrip) {
  const std::string big = random_bytes(3 << 20, 1);
  const std::string small = "small file\n";
  const auto up = build_xet_upload({big, small}, 16);  // 16-chunk xorbs: the big file spans several
  ASSERT_GE(up.xorbs.size(), 3u);
  const auto token = xet_token("hf_w", true);
  ASSERT_FALSE(token.empty());

  auto first = post_xorb(token, up.xorbs[0]);
  ASSERT_EQ(first->status, 200) << first->body;
  EXPECT_EQ(json::parse(first->body)["was_inserted"], true);
  auto again = post_xorb(token, up.xorbs[0]);
  EXPECT_EQ(json::parse(again->body)["was_inserted"], false);  // idempotent
  for (std::size_t i = 1; i < up.xorbs.size(); ++i) ASSERT_EQ(post_xorb(token, up.xorbs[i])->status, 200);
  auto shard = post_shard(token, up.shard_body());
  ASSERT_EQ(shard->status, 200) << shard->body;
  EXPECT_EQ(json::parse(shard->body)["result"], 1);
  EXPECT_EQ(json::parse(post_shard(token, up.shard_body())->body)["result"], 0);  // idempotent

  auto c = commit_lfs("weights/big.bin", big);
  ASSERT_EQ(c->status, 200) << c->body;
  ASSERT_EQ(commit_lfs("small.txt", small)->status, 200);
  const std::string commit = head("models/alice/data");

  auto h = client_->Head("/alice/data/resolve/main/weights/big.bin");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_EQ(h->get_header_value("X-Xet-Hash"), up.file_hashes[0].str());
  EXPECT_EQ(h->get_header_value("X-Linked-Size"), std::to_string(big.size()));
  EXPECT_EQ(h->get_header_value("X-Linked-Etag"), "\"" + up.sha256[0] + "\"");
  EXPECT_EQ(h->get_header_value("X-Repo-Commit"), commit);
  const std::string link = h->get_header_value("Link");
  EXPECT_NE(link.find("<http://127.0.0.1:" + std::to_string(server_->port()) + "/api/models/alice/data/xet-read-token/" +
                      commit + ">; rel=\"xet-auth\""),
            std::string::npos)
      << link;
  auto g = client_->Get("/alice/data/resolve/main/weights/big.bin");
  ASSERT_EQ(g->status, 200);
  EXPECT_TRUE(g->body == big);  // clients without Xet get the bytes

  auto tree = json::parse(client_->Get("/api/models/alice/data/tree/main?recursive=true")->body);
  bool seen = false;
  for (const auto& e : tree) {
    if (e["path"] == "weights/big.bin") {
      seen = true;
      EXPECT_EQ(e["xetHash"], up.file_hashes[0].str());
      EXPECT_EQ(e["lfs"]["oid"], up.sha256[0]);
    }
    if (e["path"] == ".gitattributes") {
      EXPECT_FALSE(e.contains("xetHash"));
    }
  }
  EXPECT_TRUE(seen);

  const auto read = xet_token("hf_r", false);
  const auto id = up.file_hashes[0].str();
  auto whole = rebuild_xet_file(*client_, read, id);
  ASSERT_EQ(whole.status, 200) << whole.error;
  EXPECT_TRUE(whole.bytes == big) << whole.error;
  const std::uint64_t n = big.size();
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {
      {0, 9}, {n - 35, n - 1}, {100000, 300000}, {1 << 20, (2 << 20) + 12345}, {n / 2, n / 2}, {5, n + 1000}};
  for (const auto& [a, b] : ranges) {
    SCOPED_TRACE(std::to_string(a) + "-" + std::to_string(b));
    auto part = rebuild_xet_file(*client_, read, id, std::pair{a, b});
    ASSERT_EQ(part.status, 200) << part.error;
    EXPECT_TRUE(part.bytes == big.substr(a, b - a + 1)) << part.error;
  }
  EXPECT_EQ(rebuild_xet_file(*client_, read, id, std::pair{n, n + 10}).status, 416);
  auto tiny = rebuild_xet_file(*client_, read, up.file_hashes[1].str());
  EXPECT_EQ(tiny.bytes, small);
  EXPECT_EQ(rebuild_xet_file(*client_, read, xet::Hash{}.str()).status, 404);  // never registered
}

TEST_F(XetCasTest, XorbsAreCheckedBeforeTheyAreStored) {
  const auto up = build_xet_upload({random_bytes(300000, 2)});
  const auto token = xet_token("hf_w", true);
  auto wrong_name = post_xorb(token, up.xorbs[0], xet::Hash{}.str());
  ASSERT_TRUE(wrong_name);
  EXPECT_EQ(wrong_name->status, 400);
  EXPECT_EQ(wrong_name->get_header_value("X-Error-Code"), "BadRequest");
  BuiltXorb cut = up.xorbs[0];
  cut.records.resize(cut.records.size() - 7);
  EXPECT_EQ(post_xorb(token, cut, up.xorbs[0].hash.str())->status, 400);
  BuiltXorb flipped = up.xorbs[0];
  flipped.records[20] = static_cast<char>(flipped.records[20] ^ 1);
  EXPECT_EQ(post_xorb(token, flipped, up.xorbs[0].hash.str())->status, 400);
  EXPECT_EQ(client_->Post("/v1/xorbs/default/not-a-hash", auth(token), "x", "application/octet-stream")->status, 400);
  EXPECT_EQ(post_xorb(token, BuiltXorb{up.xorbs[0].hash, ""})->status, 400);
  // None of them was stored: the shard naming the xorb is refused.
  EXPECT_EQ(post_shard(token, up.shard_body())->status, 400);
}

TEST_F(XetCasTest, ShardsAreCheckedAgainstTheStoredXorbs) {
  const std::string content = random_bytes(400000, 3);
  const auto up = build_xet_upload({content});
  const auto token = xet_token("hf_w", true);
  auto refused = [&](const xet::Shard& shard, const char* why) {
    SCOPED_TRACE(why);
    auto r = post_shard(token, xet::write_shard(shard));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_EQ(r->get_header_value("X-Error-Code"), "BadRequest");
  };
  refused(up.shard, "xorb never uploaded");
  for (const auto& x : up.xorbs) ASSERT_EQ(post_xorb(token, x)->status, 200);

  auto shard = up.shard;
  shard.files[0].terms[0].verification.bytes[0] ^= 1;
  refused(shard, "wrong verification hash");
  shard = up.shard;
  shard.files[0].terms[0].unpacked_bytes += 1;
  refused(shard, "term size");
  shard = up.shard;
  shard.files[0].terms[0].chunk_end += 1;
  refused(shard, "chunk range past the xorb");
  shard = up.shard;
  shard.files[0].file_hash.bytes[3] ^= 1;
  refused(shard, "file hash");
  shard = up.shard;
  shard.files[0].sha256 = xet::hash_from_sha256_hex(sha256_hex("other content"));
  refused(shard, "sha256 of the content");
  EXPECT_EQ(post_shard(token, "not a shard")->status, 400);
  EXPECT_EQ(post_shard(token, "")->status, 400);

  // Refused shards registered nothing: the commit has no content to point at.
  EXPECT_EQ(commit_lfs("f.bin", content)->status, 400);
  ASSERT_EQ(post_shard(token, up.shard_body())->status, 200);
  EXPECT_EQ(commit_lfs("f.bin", content)->status, 200);
}

TEST_F(XetCasTest, TokenScopesAndFetchUrlSignatures) {
  const std::string content = random_bytes(200000, 4);
  const auto up = build_xet_upload({content});
  const auto write = xet_token("hf_w", true);
  const auto read = xet_token("hf_r", false);
  auto no_token = client_->Post("/v1/xorbs/default/" + up.xorbs[0].hash.str(), up.xorbs[0].records, "application/octet-stream");
  EXPECT_EQ(no_token->status, 401);
  EXPECT_EQ(post_xorb("hf_w", up.xorbs[0])->status, 401);  // a Hub token is no CAS token
  EXPECT_EQ(post_xorb(read, up.xorbs[0])->status, 403);
  std::string forged = write;
  forged[forged.size() - 1] = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(post_xorb(forged, up.xorbs[0])->status, 401);
  std::string widened = read;  // a read token edited into a write token: its signature no longer fits
  widened.replace(widened.find(".r."), 3, ".w.");
  EXPECT_EQ(post_xorb(widened, up.xorbs[0])->status, 401);
  EXPECT_EQ(post_shard(read, up.shard_body())->status, 403);
  upload(write, up);
  ASSERT_EQ(commit_lfs("f.bin", content)->status, 200);
  const auto id = up.file_hashes[0].str();
  EXPECT_EQ(client_->Get("/v1/reconstructions/" + id)->status, 401);
  EXPECT_EQ(rebuild_xet_file(*client_, write, id).bytes, content);  // write includes read

  auto answer = client_->Get("/v1/reconstructions/" + id, auth(read));
  ASSERT_EQ(answer->status, 200);
  auto plan = xet::parse_reconstruction(answer->body);
  ASSERT_TRUE(plan);
  const auto& fetch = plan->fetch_info.begin()->second.front();
  const std::string url = path_of(fetch.url);
  const std::string range = "bytes=" + std::to_string(fetch.byte_start) + "-" + std::to_string(fetch.byte_end);
  auto ok = client_->Get(url, {{"Range", range}});
  EXPECT_EQ(ok->status, 206);
  EXPECT_EQ(ok->body.size(), fetch.byte_end - fetch.byte_start + 1);
  auto whole = client_->Get(url);  // no Range: the bytes the URL was signed for
  EXPECT_EQ(whole->status, 200);
  EXPECT_EQ(whole->body, ok->body);
  std::string bad = url;
  bad[bad.size() - 1] = bad.back() == '0' ? '1' : '0';
  EXPECT_EQ(client_->Get(bad, {{"Range", range}})->status, 403);
  std::string later = url;  // another expiry with the old signature
  later.replace(later.find("&exp=") + 5, 1, "9");
  EXPECT_EQ(client_->Get(later, {{"Range", range}})->status, 403);
  EXPECT_EQ(client_->Get(url, {{"Range", "bytes=" + std::to_string(fetch.byte_end + 1) + "-" +
                                             std::to_string(fetch.byte_end + 10)}})->status,
            416);

  // A token of another repo does not reconstruct this repo's file.
  ASSERT_EQ(create_repo("model", "bob", "other", "hf_bob")->status, 200);
  const auto bobs = xet_token("hf_bob", false, "models/bob/other");
  EXPECT_EQ(rebuild_xet_file(*client_, bobs, id).status, 404);
}

TEST_F(XetCasTest, FallbackRoutesAnswerSoHfXetUsesV1) {
  const auto write = xet_token("hf_w", true);
  const std::string h = xet::Hash{}.str();
  EXPECT_EQ(client_->Get("/v2/reconstructions/" + h, auth(write))->status, 404);
  EXPECT_EQ(client_->Get("/v1/chunks/default/" + h, auth(write))->status, 404);
  EXPECT_EQ(client_->Get("/v1/unknown", auth(write))->status, 404);
  EXPECT_EQ(client_->Post("/v2/shards", auth(write), std::string(100000, 'x'), "application/octet-stream")->status, 404);
  EXPECT_EQ(client_->Post("/v1/xorb-grants/default/" + h, auth(write), R"({"length":1})", "application/json")->status, 404);
  EXPECT_EQ(client_->Post("/v2/shards", std::string(10, 'x'), "application/octet-stream")->status, 401);
  EXPECT_EQ(client_->Post("/v1/telemetry", R"({"event":"xet_upload_summary"})", "application/json")->status, 200);
  // (An oversized telemetry body is refused from its head: hardening_test.cpp, over a raw socket.)
  // The connection still serves requests after each of those.
  EXPECT_EQ(client_->Get("/api/models/alice/data")->status, 200);
}

TEST_F(XetCasTest, LfsContentGetsAXetHashOnlyOnceAShardRegistersIt) {
  const std::string content = random_bytes(150000, 5);
  upload_lfs("alice/data", content, "hf_w");
  ASSERT_EQ(commit_lfs("lfs.bin", content)->status, 200);
  auto before = client_->Head("/alice/data/resolve/main/lfs.bin");
  EXPECT_EQ(before->status, 302);  // plain LFS, as before
  EXPECT_FALSE(before->has_header("X-Xet-Hash"));
  auto tree = json::parse(client_->Get("/api/models/alice/data/tree/main")->body);
  for (const auto& e : tree) EXPECT_FALSE(e.contains("xetHash"));

  const auto up = build_xet_upload({content});
  upload(xet_token("hf_w", true), up);
  auto after = client_->Head("/alice/data/resolve/main/lfs.bin");
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(after->get_header_value("X-Xet-Hash"), up.file_hashes[0].str());
}

TEST_F(XetCasTest, AShardGrantsItsContentToTheTokensRepoOnly) {
  ASSERT_EQ(create_repo("model", "bob", "other", "hf_bob")->status, 200);
  const std::string content = random_bytes(100000, 6);
  upload(xet_token("hf_w", true), build_xet_upload({content}));
  ASSERT_EQ(commit_lfs("mine.bin", content)->status, 200);
  // Bob knows the sha256 but uploaded nothing: his commit is refused.
  auto r = commit_lfs("copy.bin", content, "models/bob/other", "hf_bob");
  EXPECT_EQ(r->status, 400);
}

TEST_F(XetCasTest, EmptyAndDuplicateFilesInOneShard) {
  const std::string content = random_bytes(70000, 7);
  const auto up = build_xet_upload({content, "", content});
  upload(xet_token("hf_w", true), up);
  EXPECT_EQ(commit_lfs("a.bin", content)->status, 200);
  EXPECT_EQ(commit_lfs("empty.bin", "")->status, 200);
  auto g = client_->Get("/alice/data/resolve/main/empty.bin");
  EXPECT_EQ(g->status, 200);
  EXPECT_EQ(g->body, "");
  EXPECT_EQ(rebuild_xet_file(*client_, xet_token("hf_r", false), up.file_hashes[1].str()).bytes, "");
}

TEST_F(XetCasTest, GarbageCollectionKeepsCommittedXorbsAndDropsTheRest) {
  const std::string kept = random_bytes(120000, 8), dropped = random_bytes(120000, 9);
  const auto a = build_xet_upload({kept}), b = build_xet_upload({dropped});
  const auto token = xet_token("hf_w", true);
  upload(token, a);
  upload(token, b);
  ASSERT_EQ(commit_lfs("kept.bin", kept)->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // ages count in whole seconds
  auto young = server_->store().collect_garbage({.grace = std::chrono::seconds(3600)});
  ASSERT_TRUE(young);
  EXPECT_EQ(young->xorbs_removed, 0u);
  auto report = server_->store().collect_garbage({.grace = std::chrono::seconds(0)});
  ASSERT_TRUE(report);
  EXPECT_EQ(report->xorbs_removed, b.xorbs.size());
  EXPECT_EQ(rebuild_xet_file(*client_, xet_token("hf_r", false), a.file_hashes[0].str()).bytes, kept);
  // The dropped xorb is gone: a shard naming it must bring it again.
  EXPECT_EQ(post_shard(token, b.shard_body())->status, 400);
}

TEST(XetTokenExpiry, AnExpiredXetTokenIsRefused) {
  TempDir dir("xet-expiry");
  ServerOptions o;
  o.root = dir.path / "store";
  o.config.tokens.push_back(TokenGrant{"hf_w", "alice", true, {}, {}});
  o.xet_token_seconds = 1;
  Server server(std::move(o));
  ASSERT_TRUE(server.start());
  httplib::Client client("127.0.0.1", server.port());
  nlohmann::json body{{"name", "data"}, {"organization", "alice"}, {"type", "model"}};
  ASSERT_EQ(client.Post("/api/repos/create", {{"Authorization", "Bearer hf_w"}}, body.dump(), "application/json")->status, 200);
  auto r = client.Get("/api/models/alice/data/xet-write-token/main", {{"Authorization", "Bearer hf_w"}});
  ASSERT_EQ(r->status, 200);
  const auto token = nlohmann::json::parse(r->body)["accessToken"].get<std::string>();
  const auto up = build_xet_upload({"some bytes"});
  httplib::Headers bearer{{"Authorization", "Bearer " + token}};
  EXPECT_EQ(client.Post("/v1/xorbs/default/" + up.xorbs[0].hash.str(), bearer, up.xorbs[0].records, "application/octet-stream")->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  auto late = client.Post("/v1/shards", bearer, up.shard_body(), "application/octet-stream");
  EXPECT_EQ(late->status, 401);
  EXPECT_EQ(late->get_header_value("X-Error-Code"), "Unauthorized");
}

}  // namespace
}  // namespace khub::localhub::testing
