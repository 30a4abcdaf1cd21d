// Hostile and malformed requests: each gets the right 4xx with X-Error-Code, nothing is written,
// and the server keeps serving.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

class BadInputTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.max_commit_body = 64 * 1024;
    c.tokens.push_back(TokenGrant{"hf_w", "alice", true, {}, {}});
    c.tokens.push_back(TokenGrant{"hf_r", "bob", false, {}, {}});
    return c;
  }
  std::string before_;
  void SetUp() override {
    ServerFixture::SetUp();
    ASSERT_EQ(create_repo("kernel", "acme", "relu", "hf_w")->status, 200);
    ASSERT_EQ(commit_files("kernels/acme/relu", "main", {{"a.txt", "a"}}, "hf_w")->status, 200);
    before_ = head("kernels/acme/relu");
  }
  // Nothing was written and the server still answers.
  void expect_unchanged_and_alive() {
    auto fresh = make_client();
    auto r = fresh->Get("/api/kernels/acme/relu");
    ASSERT_TRUE(r) << "server stopped answering";
    EXPECT_EQ(json::parse(r->body)["sha"], before_);
    auto tree = json::parse(fresh->Get("/api/kernels/acme/relu/tree/main?recursive=true")->body);
    EXPECT_EQ(tree.size(), 2u);
  }
  httplib::Result post_commit(const std::string& body, const std::string& token = "hf_w") {
    return client_->Post("/api/kernels/acme/relu/commit/main", auth(token), body, "application/x-ndjson");
  }
  static void expect_error(const httplib::Result& r, int status, const std::string& code) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    EXPECT_EQ(r->get_header_value("X-Error-Code"), code) << r->body;
    EXPECT_FALSE(r->get_header_value("X-Error-Message").empty());
  }
  // Sends raw bytes and returns the status line.
  std::string raw(const std::string& bytes) const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return "connect failed";
    (void)!write(fd, bytes.data(), bytes.size());
    std::string out(4096, '\0');
    auto n = read(fd, out.data(), out.size());
    close(fd);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
  }
};

const std::string kHeader = R"({"key":"header","value":{"summary":"x"}})" "\n";

TEST_F(BadInputTest, MalformedNdjson) {
  for (const std::string& body :
       {std::string("not json\n"), std::string(R"({"key":"file","value":{"path":"a","content":""}})" "\n"),
        kHeader + R"({"key":"file","value":{"path":"b.txt","content":"!!!","encoding":"base64"}})" "\n",
        kHeader + R"({"key":"file","value":{"path":"b.txt","content":"x","encoding":"rot13"}})" "\n",
        kHeader + R"({"key":"mystery","value":{"path":"b.txt"}})" "\n",
        kHeader + R"({"key":"file","value":{"path":7,"content":"x"}})" "\n",
        kHeader + R"({"key":"lfsFile","value":{"path":"w","algo":"sha256","oid":"xyz","size":1}})" "\n",
        kHeader + R"({"key":"lfsFile","value":{"path":"w","algo":"md5","oid":")" + std::string(64, 'a') + R"(","size":1}})" "\n",
        kHeader + kHeader, std::string(R"({"key":"header","value":{"summary":""}})" "\n"), std::string("")}) {
    expect_error(post_commit(body), 400, "BadRequest");
  }
  expect_unchanged_and_alive();
}

TEST_F(BadInputTest, HostilePaths) {
  for (std::string path : {"../escape.txt", "/etc/passwd", "a/../../b", "..\\\\escape", "nul\\u0000byte", ".git/config",
                           "dir//x", "./a"}) {
    auto body = kHeader + R"({"key":"file","value":{"path":")" + path + R"(","content":"eA==","encoding":"base64"}})" "\n";
    expect_error(post_commit(body), 400, "BadRequest");
  }
  expect_error(client_->Get("/kernels/acme/relu/resolve/main/a/%2E%2E/%2E%2E/etc/passwd"), 400, "BadRequest");
  expect_error(client_->Get("/kernels/acme/relu/resolve/main/a%00b"), 400, "BadRequest");
  expect_error(client_->Get("/kernels/acme/relu/resolve/main/a%zz"), 400, "BadRequest");
  auto pre = client_->Post("/api/kernels/acme/relu/preupload/main", auth("hf_w"),
                           R"({"files":[{"path":"../x","size":1,"sample":""}]})", "application/json");
  expect_error(pre, 422, "BadRequest");  // the Hub's status for a bad preupload path
  expect_unchanged_and_alive();
}

TEST_F(BadInputTest, OversizedHeadersAndBodies) {
  auto huge_header = client_->Get("/api/kernels/acme/relu", {{"X-Big", std::string(20000, 'h')}});
  if (huge_header) expect_error(huge_header, 400, "BadRequest");  // or the server closed the connection
  std::string long_uri = "/api/kernels/acme/relu/tree/main/" + std::string(9000, 'u');
  auto uri = raw("GET " + long_uri + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(uri.substr(0, 12), "HTTP/1.1 414");
  EXPECT_NE(uri.find("X-Error-Code: UriTooLong"), std::string::npos);
  auto big = kHeader + R"({"key":"file","value":{"path":"big","content":")" + std::string(100000, 'a') + "\"}}\n";
  expect_error(post_commit(big), 413, "PayloadTooLarge");
  auto garbage = raw("GARBAGE\r\n\r\n");
  EXPECT_EQ(garbage.substr(0, 12), "HTTP/1.1 400");
  auto bad_range = client_->Get("/kernels/acme/relu/resolve/main/a.txt", {{"Range", "bytes=z-q"}});
  expect_error(bad_range, 416, "RangeNotSatisfiable");
  expect_unchanged_and_alive();
}

TEST_F(BadInputTest, UnknownReposRevisionsAndRoutes) {
  expect_error(client_->Get("/api/kernels/acme/nope"), 404, "RepoNotFound");
  expect_error(client_->Get("/api/kernels/acme/relu/revision/v99"), 404, "RevisionNotFound");
  expect_error(client_->Get("/api/kernels/acme/relu/tree/" + std::string(40, 'a')), 404, "RevisionNotFound");
  expect_error(client_->Head("/kernels/acme/nope/resolve/main/a.txt"), 404, "RepoNotFound");
  expect_error(client_->Get("/nowhere"), 404, "NotFound");
  expect_error(client_->Post("/api/kernels/acme/relu/commit/v99", auth("hf_w"), kHeader, "application/x-ndjson"), 404,
               "RevisionNotFound");
  expect_error(client_->Post("/api/kernels/acme/nope/commit/main", auth("hf_w"), kHeader, "application/x-ndjson"), 404,
               "RepoNotFound");
  expect_error(client_->Post("/api/repos/create", auth("hf_w"), R"({"name":"bad name!","organization":"acme"})",
                             "application/json"), 400, "BadRequest");
  expect_error(client_->Post("/api/repos/create", auth("hf_w"), R"({"name":5})", "application/json"), 400, "BadRequest");
  expect_error(client_->Post("/api/repos/create", auth("hf_w"), R"({"name":"x","type":"thing"})", "application/json"),
               400, "BadRequest");
  expect_error(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", auth("hf_w"), "[]", "application/json"),
               422, "BadRequest");
  expect_unchanged_and_alive();
}

// Names from a request come back in X-Error-Message; control bytes in them (terminal escapes) are
// blanked, so a client printing the message cannot be driven by whoever named the revision.
TEST_F(BadInputTest, ErrorMessagesCarryNoControlBytes) {
  for (const std::string path : {"/api/kernels/acme/relu/revision/v%1B%5D0%3Bowned%07%1B%5B2J",
                                 "/api/kernels/acme/relu/tree/x%1B%5B31m%7F", "/kernels/acme/relu/resolve/main/a%1B%5B2J.txt"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    const std::string msg = r->get_header_value("X-Error-Message");
    EXPECT_FALSE(msg.empty()) << path;
    for (unsigned char c : msg) {
      EXPECT_FALSE(c < 0x20 || c == 0x7f) << path << ": control byte " << int(c) << " in " << msg;
    }
  }
  expect_unchanged_and_alive();
}

// A field of another JSON type is refused by name, never taken as absent: `"private": "true"` had
// created a public repo, and `"organization": 5` had deleted the caller's own repo of that name.
TEST_F(BadInputTest, WrongTypedFieldsAreRefused) {
  const auto post = [&](const std::string& path, const std::string& body) {
    return client_->Post(path, auth("hf_w"), body, "application/json");
  };
  ASSERT_EQ(create_repo("kernel", "alice", "mine", "hf_w")->status, 200);
  auto r = post("/api/repos/create", R"({"name":"secret","organization":"acme","private":"true"})");
  expect_error(r, 400, "BadRequest");
  EXPECT_NE(r->body.find("field 'private' must be a boolean"), std::string::npos) << r->body;
  EXPECT_EQ(client_->Get("/api/models/acme/secret")->status, 404);
  expect_error(post("/api/repos/create", R"({"name":"x","visibility":5})"), 400, "BadRequest");
  expect_error(client_->Delete("/api/repos/delete", auth("hf_w"), R"({"name":"mine","type":"kernel","organization":5})",
                               "application/json"),
               400, "BadRequest");
  EXPECT_EQ(client_->Get("/api/kernels/alice/mine")->status, 200);
  expect_error(client_->Put("/api/kernels/acme/relu/settings", auth("hf_w"), R"({"private":"true"})", "application/json"),
               400, "BadRequest");
  expect_error(post("/api/kernels/acme/relu/branch/b1", R"({"startingPoint":5})"), 400, "BadRequest");
  expect_error(post_commit(R"({"key":"header","value":{"summary":"s","parentCommit":5}})" "\n"), 400, "BadRequest");
  expect_error(post("/kernels/acme/relu.git/info/lfs/objects/batch", R"({"operation":5,"objects":[]})"), 400, "BadRequest");
  expect_error(post("/api/validate-yaml", R"({"content":5})"), 400, "BadRequest");
  expect_unchanged_and_alive();
}

TEST_F(BadInputTest, WritesNeedAWriteToken) {
  auto body = kHeader + R"({"key":"file","value":{"path":"b.txt","content":"eA==","encoding":"base64"}})" "\n";
  expect_error(post_commit(body, "hf_r"), 403, "Forbidden");
  expect_error(post_commit(body, ""), 401, "Unauthorized");
  expect_error(client_->Post("/api/kernels/acme/relu/branch/v1", auth("hf_r"), "{}", "application/json"), 403, "Forbidden");
  expect_error(client_->Delete("/api/kernels/acme/relu/branch/main", auth("hf_r")), 403, "Forbidden");
  json batch{{"operation", "upload"}, {"objects", {{{"oid", std::string(64, 'a')}, {"size", 1}}}}};
  expect_error(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", auth("hf_r"), batch.dump(),
                             "application/json"), 403, "Forbidden");
  expect_error(client_->Delete("/api/repos/delete", auth("hf_r"), R"({"name":"relu","organization":"acme","type":"kernel"})",
                               "application/json"), 403, "Forbidden");
  expect_unchanged_and_alive();
}

}  // namespace
}  // namespace khub::localhub::testing
