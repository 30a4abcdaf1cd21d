// The write side: preupload, Git LFS batch (basic and multipart, verify) and NDJSON commits.
#include <atomic>
#include <thread>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

class UploadTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.lfs_chunk_size = 64 * 1024;  // multipart above 64 KiB
    c.max_regular_file = 256 * 1024;
    return c;
  }
  void SetUp() override {
    ServerFixture::SetUp();
    ASSERT_EQ(create_repo("kernel", "acme", "relu")->status, 200);
  }
  static std::string ndjson(const std::vector<json>& lines) {
    std::string out;
    for (const auto& l : lines) out += l.dump() + "\n";
    return out;
  }
  httplib::Result commit(const std::vector<json>& lines, const std::string& rev = "main", const std::string& query = "") {
    return client_->Post("/api/kernels/acme/relu/commit/" + rev + query, ndjson(lines), "application/x-ndjson");
  }
  static json header(const std::string& parent = "") {
    json v{{"summary", "s"}, {"description", ""}};
    if (!parent.empty()) v["parentCommit"] = parent;
    return {{"key", "header"}, {"value", v}};
  }
  static json lfs_line(const std::string& path, const std::string& data) {
    return {{"key", "lfsFile"}, {"value", {{"path", path}, {"algo", "sha256"}, {"oid", sha256_hex(data)}, {"size", data.size()}}}};
  }
  static json file_line(const std::string& path, const std::string& data) {
    return {{"key", "file"}, {"value", {{"path", path}, {"content", b64(data)}, {"encoding", "base64"}}}};
  }
};

TEST_F(UploadTest, PreuploadModesAndExistingOids) {
  ASSERT_EQ(commit({header(), file_line("a.py", "print(1)\n")})->status, 200);
  json files = json::array();
  files.push_back({{"path", "a.py"}, {"size", 9}, {"sample", b64("print(1)\n")}});
  files.push_back({{"path", "big.txt"}, {"size", 300 * 1024}, {"sample", b64("text")}});
  files.push_back({{"path", "bin.so"}, {"size", 2000000}, {"sample", b64(std::string("\x7f" "ELF\0\0", 6))}});
  files.push_back({{"path", "w.safetensors"}, {"size", 10}, {"sample", b64("abc")}});  // .gitattributes rule
  files.push_back({{"path", "empty"}, {"size", 0}, {"sample", ""}});
  auto r = client_->Post("/api/kernels/acme/relu/preupload/main", json{{"files", files}}.dump(), "application/json");
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["commitOid"], head("kernels/acme/relu"));
  std::vector<std::string> modes;
  for (auto& f : j["files"]) modes.push_back(f["uploadMode"]);
  EXPECT_EQ(modes, (std::vector<std::string>{"regular", "lfs", "lfs", "lfs", "regular"}));
  EXPECT_EQ(j["files"][0]["oid"], git_blob_sha1_hex("print(1)\n"));
  EXPECT_FALSE(j["files"][1].contains("oid"));
  EXPECT_EQ(j["files"][0]["shouldIgnore"], false);
  auto ignored = client_->Post("/api/kernels/acme/relu/preupload/main",
                               R"({"files":[{"path":"x/__pycache__/m.pyc","size":3,"sample":""}],"gitIgnore":"__pycache__/\n*.pyc\n"})",
                               "application/json");
  EXPECT_EQ(json::parse(ignored->body)["files"][0]["shouldIgnore"], true);
}

TEST_F(UploadTest, BasicAndMultipartLfsThenCommit) {
  std::string small(10000, 's'), large(200000, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>((i * 131) >> 3);
  upload_lfs("kernels/acme/relu", small);
  upload_lfs("kernels/acme/relu", large);  // 4 parts of 64 KiB
  EXPECT_TRUE(server_->store().blobs().contains(sha256_hex(large)));
  // LFS download actions only for objects committed to this repo.
  json down{{"operation", "download"}, {"objects", {{{"oid", sha256_hex(small)}, {"size", small.size()}}}}};
  auto dl = json::parse(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", down.dump(), "application/json")->body);
  EXPECT_EQ(dl["objects"][0]["error"]["code"], 404);
  // Known objects come back without actions.
  json batch{{"operation", "upload"}, {"transfers", {"basic"}}, {"objects", {{{"oid", sha256_hex(small)}, {"size", small.size()}}}}};
  auto again = json::parse(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", batch.dump(), "application/json")->body);
  EXPECT_FALSE(again["objects"][0].contains("actions"));

  auto parent = head("kernels/acme/relu");
  auto r = commit({header(parent), lfs_line("build/v/small.bin", small), lfs_line("build/v/large.so", large),
                   file_line("build/v/__init__.py", "from ._ops import ops\n")});
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_EQ(j["success"], true);
  auto oid = j["commitOid"].get<std::string>();
  EXPECT_EQ(oid.size(), 40u);
  EXPECT_NE(j["commitUrl"].get<std::string>().find("/kernels/acme/relu/commit/" + oid), std::string::npos);
  EXPECT_EQ(head("kernels/acme/relu"), oid);
  auto dl2 = json::parse(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", down.dump(), "application/json")->body);
  auto href = dl2["objects"][0]["actions"]["download"]["href"].get<std::string>();
  EXPECT_EQ(client_->Get(href.substr(href.find('/', 7)))->body, small);
  auto init = client_->Head("/kernels/acme/relu/resolve/" + oid + "/build/v/__init__.py");
  EXPECT_EQ(init->get_header_value("ETag"), "\"1cec5723464b586acbda5ab039a6248d38255033\"");

  // Stale parent: 412, branch unchanged.
  auto stale = commit({header(parent), file_line("x.txt", "x")});
  EXPECT_EQ(stale->status, 412);
  EXPECT_NE(stale->body.find("The branch was updated"), std::string::npos);
  EXPECT_EQ(head("kernels/acme/relu"), oid);

  // Rename (file with oldPath and no content).
  auto ren = commit({header(), json{{"key", "file"}, {"value", {{"path", "build/v/init.py"}, {"oldPath", "build/v/__init__.py"}}}}});
  ASSERT_EQ(ren->status, 200) << ren->body;
  EXPECT_EQ(client_->Get("/kernels/acme/relu/resolve/main/build/v/init.py")->body, "from ._ops import ops\n");
  auto escape = commit({header(), json{{"key", "file"}, {"value", {{"path", "x.py"}, {"oldPath", "../../etc/passwd"}}}}});
  EXPECT_EQ(escape->status, 400);
  EXPECT_NE(escape->body.find("invalid oldPath"), std::string::npos) << escape->body;

  // Deletions.
  auto del = commit({header(), json{{"key", "deletedFolder"}, {"value", {{"path", "build/v/"}}}}});
  ASSERT_EQ(del->status, 200) << del->body;
  auto tree = json::parse(client_->Get("/api/kernels/acme/relu/tree/main?recursive=true")->body);
  EXPECT_EQ(tree.size(), 1u);  // .gitattributes
  auto missing = commit({header(), json{{"key", "deletedFile"}, {"value", {{"path", "nope.txt"}}}}});
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "EntryNotFound");
  EXPECT_NE(missing->body.find("A file with this name doesn't exist"), std::string::npos);
}

// Two repos uploading the same object in parts keep separate parts: one repo's completion neither
// uses nor removes the other's parts.
TEST_F(UploadTest, MultipartPartsArePerRepo) {
  ASSERT_EQ(create_repo("kernel", "acme", "other")->status, 200);
  std::string large(150000, '\0');
  for (size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>((i * 7919) >> 5);
  auto actions = [&](const std::string& web_repo) {
    json batch{{"operation", "upload"}, {"transfers", {"basic", "multipart"}},
               {"objects", {{{"oid", sha256_hex(large)}, {"size", large.size()}}}}};
    auto r = client_->Post("/" + web_repo + ".git/info/lfs/objects/batch", batch.dump(), "application/vnd.git-lfs+json");
    return json::parse(r->body)["objects"][0]["actions"]["upload"];
  };
  auto path_of = [](const std::string& url) { return url.substr(url.find('/', 7)); };
  const json a = actions("kernels/acme/relu");
  const auto chunk = std::stoull(a["header"]["chunk_size"].get<std::string>());
  // acme/relu sends its first part only; acme/other uploads and completes the whole object.
  // A part number is the whole path segment: with anything after its digits (atoi read "1abc" as part 1) or
  // past any int, the request is refused before its signature is looked at.
  const std::string part1 = path_of(a["header"]["00001"].get<std::string>());
  for (const std::string bad : {"/part/1abc?", "/part/18446744073709551617?", "/part/0?"}) {
    std::string p = part1;
    p.replace(p.find("/part/1?"), 8, bad);
    auto refused = client_->Put(p, large.substr(0, chunk), "application/octet-stream");
    EXPECT_EQ(refused->status, 400) << bad;
    EXPECT_NE(refused->body.find("bad part number"), std::string::npos) << bad << ": " << refused->body;
  }
  auto a1 = client_->Put(part1, large.substr(0, chunk), "application/octet-stream");
  ASSERT_EQ(a1->status, 200);
  upload_lfs("kernels/acme/other", large);
  // acme/relu's completion still needs its own second and third parts...
  json parts = json::array({{{"partNumber", 1}, {"etag", a1->get_header_value("ETag")}}});
  auto early = client_->Post(path_of(a["href"].get<std::string>()),
                             json{{"oid", sha256_hex(large)}, {"parts", json::array({parts[0], parts[0], parts[0]})}}.dump(),
                             "application/vnd.git-lfs+json");
  EXPECT_EQ(early->status, 400);
  // ...and with them it completes from the part it sent before the other repo's completion.
  for (std::size_t n = 2; (n - 1) * chunk < large.size(); ++n) {
    char key[16];
    std::snprintf(key, sizeof key, "%05zu", n);
    auto p = client_->Put(path_of(a["header"][key].get<std::string>()), large.substr((n - 1) * chunk, chunk),
                          "application/octet-stream");
    ASSERT_EQ(p->status, 200);
    parts.push_back({{"partNumber", n}, {"etag", p->get_header_value("ETag")}});
  }
  auto done = client_->Post(path_of(a["href"].get<std::string>()), json{{"oid", sha256_hex(large)}, {"parts", parts}}.dump(),
                            "application/vnd.git-lfs+json");
  EXPECT_EQ(done->status, 200) << done->body;
}

TEST_F(UploadTest, LfsFileNeverUploadedIs400) {
  auto before = head("kernels/acme/relu");
  auto r = commit({header(), lfs_line("w.bin", "never uploaded")});
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("LFS pointer pointed to a file that does not exist"), std::string::npos);
  EXPECT_NE(r->body.find("w.bin"), std::string::npos);
  EXPECT_EQ(head("kernels/acme/relu"), before);
}

// Inline files become blobs only once the whole commit has parsed: a rejected commit leaves
// neither a blob nor a temp file behind.
TEST_F(UploadTest, RejectedCommitLeavesNoInlineBlob) {
  auto before = head("kernels/acme/relu");
  const std::string a = "inline a " + std::string(300, 'a'), b = "inline b " + std::string(300, 'b');
  auto r = commit({header(), file_line("a.txt", a), file_line("b.txt", b), json{{"key", "nonsense"}, {"value", json::object()}}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(head("kernels/acme/relu"), before);
  EXPECT_FALSE(server_->store().blobs().contains(sha256_hex(a)));
  EXPECT_FALSE(server_->store().blobs().contains(sha256_hex(b)));
  EXPECT_TRUE(std::filesystem::is_empty(server_->store().blobs().tmp_dir()));
  // The same files in a good commit land, and each is readable.
  r = commit({header(), file_line("a.txt", a), file_line("b.txt", b), file_line("a2.txt", a)});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(server_->store().blobs().contains(sha256_hex(a)));
  EXPECT_EQ(server_->store().blobs().read(sha256_hex(b)).value(), b);
  EXPECT_TRUE(std::filesystem::is_empty(server_->store().blobs().tmp_dir()));
}

TEST_F(UploadTest, UploadWithWrongContentStoresNothing) {
  std::string data(5000, 'd');
  json batch{{"operation", "upload"}, {"transfers", {"basic"}}, {"objects", {{{"oid", sha256_hex(data)}, {"size", data.size()}}}}};
  auto r = json::parse(client_->Post("/kernels/acme/relu.git/info/lfs/objects/batch", batch.dump(), "application/json")->body);
  auto href = r["objects"][0]["actions"]["upload"]["href"].get<std::string>();
  auto path = href.substr(href.find('/', 7));
  auto wrong = client_->Put(path, std::string(5000, 'e'), "application/octet-stream");
  EXPECT_EQ(wrong->status, 400);
  EXPECT_NE(wrong->body.find("sha256 mismatch"), std::string::npos);
  auto short_body = client_->Put(path, std::string(4000, 'd'), "application/octet-stream");
  EXPECT_EQ(short_body->status, 400);
  EXPECT_FALSE(server_->store().blobs().contains(sha256_hex(data)));
  EXPECT_EQ(client_->Put(path, data, "application/octet-stream")->status, 200);
  EXPECT_TRUE(server_->store().blobs().contains(sha256_hex(data)));
  // The signed URL is bound to its object.
  auto other = path;
  other.replace(other.find(sha256_hex(data)), 64, std::string(64, 'a'));
  EXPECT_EQ(client_->Put(other, data, "application/octet-stream")->status, 403);
}

TEST_F(UploadTest, PullRequestCommit) {
  auto r = commit({header(), file_line("pr.txt", "pr")}, "main", "?create_pr=1");
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = json::parse(r->body);
  EXPECT_NE(j["pullRequestUrl"].get<std::string>().find("/kernels/acme/relu/discussions/1"), std::string::npos);
  auto refs = json::parse(client_->Get("/api/kernels/acme/relu/refs?include_prs=1")->body);
  ASSERT_EQ(refs["pullRequests"].size(), 1u);
  EXPECT_EQ(refs["pullRequests"][0]["ref"], "refs/pr/1");
  EXPECT_EQ(refs["pullRequests"][0]["targetCommit"], j["commitOid"]);
  auto more = commit({header(), file_line("pr2.txt", "2")}, "refs%2Fpr%2F1");
  ASSERT_EQ(more->status, 200) << more->body;
  EXPECT_EQ(client_->Get("/kernels/acme/relu/resolve/refs%2Fpr%2F1/pr2.txt")->body, "2");
  EXPECT_EQ(client_->Head("/kernels/acme/relu/resolve/main/pr.txt")->status, 404);
}

TEST_F(UploadTest, ConcurrentCommitsAllLandInOrder) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      auto c = make_client();
      for (int i = 0; i < 8; ++i) {
        std::string body = header().dump() + "\n" + file_line("t" + std::to_string(t) + "/" + std::to_string(i), "x").dump() + "\n";
        auto r = c->Post("/api/kernels/acme/relu/commit/main", body, "application/x-ndjson");
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, 48);
  auto commits = client_->Get("/api/kernels/acme/relu/commits/main");
  EXPECT_EQ(commits->get_header_value("X-Total-Count"), "49");  // + the initial commit
  // Pages of 50 by default (here one); p and limit page through, Link names the next page.
  EXPECT_EQ(json::parse(commits->body).size(), 49u);
  EXPECT_TRUE(commits->get_header_value("Link").empty());
  auto page = client_->Get("/api/kernels/acme/relu/commits/main?p=2&limit=20");
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(json::parse(page->body).size(), 9u);
  EXPECT_EQ(json::parse(page->body).back()["title"], "initial commit");
  auto first = client_->Get("/api/kernels/acme/relu/commits/main?limit=20");
  EXPECT_NE(first->get_header_value("Link").find("/commits/main?p=1&limit=20>; rel=\"next\""), std::string::npos);
  EXPECT_EQ(client_->Get("/api/kernels/acme/relu/commits/main?limit=abc")->status, 400);
  EXPECT_EQ(client_->Get("/api/kernels/acme/relu/tree/main?limit=0")->status, 400);
  auto tree = json::parse(client_->Get("/api/kernels/acme/relu/tree/main?recursive=true")->body);
  EXPECT_EQ(tree.size(), 1u + 6u + 48u);  // .gitattributes, 6 folders, 48 files
}

TEST_F(UploadTest, LargeRegularFileMustBeLfs) {
  auto r = commit({header(), file_line("big.txt", std::string(300 * 1024, 'b'))});
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("larger than 10 MiB"), std::string::npos);
}

// Blobs are stored once for all repos, but a repo may only point an LFS file at content it was
// given: knowing another (private) repo's sha256 and size must not copy the file or reveal it exists.
class CrossRepoLfsTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.tokens.push_back(TokenGrant{"hf_alice", "alice", true, {}, {"alice"}});
    c.tokens.push_back(TokenGrant{"hf_bob", "bob", true, {}, {"bob"}});
    return c;
  }
  httplib::Result batch(const std::string& web_repo, const std::string& token, const std::string& data) {
    json body{{"operation", "upload"}, {"transfers", {"basic"}},
              {"objects", {{{"oid", sha256_hex(data)}, {"size", data.size()}}}}};
    return client_->Post("/" + web_repo + ".git/info/lfs/objects/batch", auth(token), body.dump(),
                         "application/vnd.git-lfs+json");
  }
  httplib::Result commit_lfs(const std::string& api_repo, const std::string& token, const std::string& data) {
    std::string body = json{{"key", "header"}, {"value", {{"summary", "s"}}}}.dump() + "\n" +
                       json{{"key", "lfsFile"}, {"value", {{"path", "x.bin"}, {"algo", "sha256"},
                                                          {"oid", sha256_hex(data)}, {"size", data.size()}}}}.dump() + "\n";
    return client_->Post("/api/" + api_repo + "/commit/main", auth(token), body, "application/x-ndjson");
  }
};

TEST_F(CrossRepoLfsTest, ARepoUsesOnlyContentItWasGiven) {
  const std::string secret(3000, 's');
  ASSERT_EQ(create_repo("model", "alice", "secret", "hf_alice", true)->status, 200);
  ASSERT_EQ(create_repo("model", "bob", "steal", "hf_bob")->status, 200);
  upload_lfs("alice/secret", secret, "hf_alice");
  ASSERT_EQ(commit_lfs("models/alice/secret", "hf_alice", secret)->status, 200);
  // Alice's own repo: stored and hers, nothing to upload again.
  EXPECT_FALSE(json::parse(batch("alice/secret", "hf_alice", secret)->body)["objects"][0].contains("actions"));

  // Bob knows the sha256 and size: his repo is told to upload, as for any object it never had ...
  auto offer = json::parse(batch("bob/steal", "hf_bob", secret)->body)["objects"][0];
  EXPECT_TRUE(offer["actions"].contains("upload")) << offer.dump();
  json wrong{{"operation", "upload"}, {"objects", {{{"oid", sha256_hex(secret)}, {"size", 1}}}}};
  auto probe = client_->Post("/bob/steal.git/info/lfs/objects/batch", auth("hf_bob"), wrong.dump(),
                             "application/vnd.git-lfs+json");
  EXPECT_EQ(probe->body.find("stored with size"), std::string::npos) << "must not reveal that the object exists";
  // ... verify does not confirm it, and a commit pointing at it is refused, leaving the branch as it was.
  auto verify = client_->Post("/bob/steal.git/info/lfs/objects/verify", auth("hf_bob"),
                              json{{"oid", sha256_hex(secret)}, {"size", secret.size()}}.dump(), "application/json");
  EXPECT_EQ(verify->status, 404);
  auto before = head("models/bob/steal");
  auto stolen = commit_lfs("models/bob/steal", "hf_bob", secret);
  EXPECT_EQ(stolen->status, 400);
  EXPECT_NE(stolen->body.find("LFS pointer pointed to a file that does not exist"), std::string::npos) << stolen->body;
  EXPECT_EQ(head("models/bob/steal"), before);

  // Uploading the bytes proves he has them: then the commit goes through (stored once on disk).
  upload_lfs("bob/steal", secret, "hf_bob");
  EXPECT_EQ(commit_lfs("models/bob/steal", "hf_bob", secret)->status, 200);
}

}  // namespace
}  // namespace khub::localhub::testing
