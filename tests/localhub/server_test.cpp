// The read side of the Hub API against a real loopback server: repo info, refs, branches and
// tags, tree listing with pagination, resolve headers, ranges, auth and organisation overview.
#include <fstream>
#include <mutex>
#include <thread>

#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

class ServerTest : public ServerFixture {};

TEST_F(ServerTest, CreateRepoThenConflict) {
  auto r = create_repo("kernel", "acme", "relu");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto body = json::parse(r->body);
  EXPECT_EQ(body["url"], "http://127.0.0.1:" + std::to_string(server_->port()) + "/kernels/acme/relu");
  EXPECT_EQ(body["name"], "acme/relu");
  auto again = create_repo("kernel", "acme", "relu");
  EXPECT_EQ(again->status, 409);
  EXPECT_NE(json::parse(again->body)["error"].get<std::string>().find("already created"), std::string::npos);
  auto info = client_->Get("/api/kernels/acme/relu");
  ASSERT_EQ(info->status, 200);
  auto j = json::parse(info->body);
  EXPECT_EQ(j["id"], "acme/relu");
  EXPECT_EQ(j["sha"].get<std::string>().size(), 40u);
  EXPECT_EQ(j["private"], false);
  EXPECT_EQ(j["repoType"], "kernel");
  // The model API does not see a kernel repo.
  auto model = client_->Get("/api/models/acme/relu");
  EXPECT_EQ(model->status, 404);
  EXPECT_EQ(model->get_header_value("X-Error-Code"), "RepoNotFound");
  EXPECT_FALSE(model->get_header_value("X-Request-Id").empty());
  // Names are case-insensitive, as on the Hub: another spelling finds the same repo, and cannot
  // create a second one.
  auto other_case = client_->Get("/api/kernels/ACME/ReLU");
  ASSERT_EQ(other_case->status, 200);
  EXPECT_EQ(json::parse(other_case->body)["id"], "acme/relu");
  EXPECT_EQ(client_->Head("/kernels/Acme/Relu/resolve/main/.gitattributes")->status, 200);
  EXPECT_EQ(create_repo("kernel", "acme", "RELU")->status, 409);
}

// expand=true (tree and paths-info): each entry's lastCommit is the newest commit that changed it,
// which HfFileSystem.modified and list_repo_tree(expand=True) read.
// A new store is the owner's alone, and its URL-signing key is random and kept across restarts.
TEST_F(ServerTest, NewStoreIsPrivateWithARandomKey) {
  namespace fs = std::filesystem;
  const fs::path root = dir_.path / "store";
  EXPECT_EQ(fs::status(root).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_EQ(fs::status(root / "url-secret").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  auto read_key = [&](const fs::path& file) {
    std::ifstream in(file);
    std::string key;
    std::getline(in, key);
    return key;
  };
  const std::string key = read_key(root / "url-secret");
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  restart(config());
  EXPECT_EQ(read_key(root / "url-secret"), key);
  // Another store draws another key.
  ServerOptions o;
  o.root = dir_.path / "other";
  Server other(std::move(o));
  ASSERT_TRUE(other.start());
  EXPECT_NE(read_key(dir_.path / "other" / "url-secret"), key);
  other.stop();
}

TEST_F(ServerTest, ExpandGivesEachPathItsLastCommit) {
  ASSERT_EQ(create_repo("model", "acme", "m")->status, 200);
  const std::string first = head("models/acme/m");
  ASSERT_EQ(commit_files("models/acme/m", "main", {{"a.txt", "1"}, {"d/x.txt", "x"}})->status, 200);
  const std::string second = head("models/acme/m");
  ASSERT_EQ(commit_files("models/acme/m", "main", {{"b.txt", "b"}})->status, 200);
  const std::string third = head("models/acme/m");
  ASSERT_EQ(commit_files("models/acme/m", "main", {{"d/x.txt", "changed"}})->status, 200);
  const std::string fourth = head("models/acme/m");

  auto tree = client_->Get("/api/models/acme/m/tree/main?expand=True&recursive=true");
  ASSERT_EQ(tree->status, 200) << tree->body;
  std::map<std::string, std::string> last;
  for (const auto& e : json::parse(tree->body)) last[e["path"]] = e["lastCommit"]["id"];
  EXPECT_EQ(last, (std::map<std::string, std::string>{
                      {".gitattributes", first}, {"a.txt", second}, {"b.txt", third}, {"d", fourth}, {"d/x.txt", fourth}}));
  auto entry = json::parse(client_->Get("/api/models/acme/m/tree/" + third + "?expand=true")->body);
  EXPECT_EQ(entry[1]["lastCommit"]["id"], second);  // d, as of the third commit
  EXPECT_EQ(entry[1]["lastCommit"]["title"], "test commit");
  EXPECT_FALSE(json::parse(client_->Get("/api/models/acme/m/tree/main")->body)[0].contains("lastCommit"));

  auto info = client_->Post("/api/models/acme/m/paths-info/main", "paths=a.txt&paths=d&expand=True",
                            "application/x-www-form-urlencoded");
  ASSERT_EQ(info->status, 200) << info->body;
  auto paths = json::parse(info->body);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0]["lastCommit"]["id"], second);
  EXPECT_EQ(paths[1]["lastCommit"]["id"], fourth);
}

TEST_F(ServerTest, RefsBranchesAndTags) {
  create_repo("kernel", "acme", "relu");
  auto main = head("kernels/acme/relu");
  ASSERT_EQ(client_->Post("/api/kernels/acme/relu/branch/v1", "{}", "application/json")->status, 200);
  auto again = client_->Post("/api/kernels/acme/relu/branch/v1", "{}", "application/json");
  EXPECT_EQ(again->status, 409);
  // The Hub's wording, which huggingface_hub's tests match.
  EXPECT_EQ(again->get_header_value("X-Error-Message"), "Reference refs/heads/v1 already exists");
  EXPECT_EQ(client_->Post("/api/kernels/acme/relu/branch/refs%2Fpr%2F5", "{}", "application/json")->status, 400);
  ASSERT_EQ(client_->Post("/api/kernels/acme/relu/tag/v1", R"({"tag":"t1"})", "application/json")->status, 200);
  auto refs = json::parse(client_->Get("/api/kernels/acme/relu/refs")->body);
  ASSERT_EQ(refs["branches"].size(), 2u);
  EXPECT_EQ(refs["branches"][1]["name"], "v1");
  EXPECT_EQ(refs["branches"][1]["ref"], "refs/heads/v1");
  EXPECT_EQ(refs["branches"][1]["targetCommit"], main);
  EXPECT_EQ(refs["tags"][0]["ref"], "refs/tags/t1");
  EXPECT_FALSE(refs.contains("pullRequests"));
  EXPECT_TRUE(json::parse(client_->Get("/api/kernels/acme/relu/refs?include_prs=1")->body).contains("pullRequests"));
  auto main_delete = client_->Delete("/api/kernels/acme/relu/branch/main");
  EXPECT_EQ(main_delete->status, 400);
  EXPECT_EQ(main_delete->get_header_value("X-Error-Message"), "Cannot delete refs/heads/main");
  EXPECT_EQ(client_->Delete("/api/kernels/acme/relu/branch/v1")->status, 200);
  auto gone = client_->Get("/api/kernels/acme/relu/revision/v1");
  EXPECT_EQ(gone->status, 404);
  EXPECT_EQ(gone->get_header_value("X-Error-Code"), "RevisionNotFound");
}

TEST_F(ServerTest, TreeListingRecursiveAndPaginated) {
  create_repo("kernel", "acme", "relu");
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 5; ++i) files.emplace_back("build/v" + std::to_string(i) + "/f.py", "x" + std::to_string(i));
  ASSERT_EQ(commit_files("kernels/acme/relu", "main", files)->status, 200);

  auto top = json::parse(client_->Get("/api/kernels/acme/relu/tree/main/build")->body);
  ASSERT_EQ(top.size(), 5u);
  EXPECT_EQ(top[0]["type"], "directory");
  EXPECT_EQ(top[0]["path"], "build/v0");

  // recursive: 1 .gitattributes + build + 5 dirs + 5 files = 12 entries, 5 per page.
  std::vector<std::string> paths;
  std::string next = "/api/kernels/acme/relu/tree/main?recursive=true&limit=5";
  int pages = 0;
  while (!next.empty()) {
    auto r = client_->Get(next);
    ASSERT_EQ(r->status, 200);
    for (auto& e : json::parse(r->body)) paths.push_back(e["path"]);
    auto link = r->get_header_value("Link");
    next.clear();
    if (!link.empty()) {
      ASSERT_NE(link.find("rel=\"next\""), std::string::npos);
      auto url = link.substr(1, link.find('>') - 1);
      next = url.substr(url.find('/', 7));
    }
    ++pages;
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(paths.size(), 12u);
  auto missing = client_->Get("/api/kernels/acme/relu/tree/main/nope");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "EntryNotFound");

  auto info = client_->Post("/api/kernels/acme/relu/paths-info/main", R"({"paths":["build/v1/f.py","build","no"]})",
                            "application/json");
  auto pj = json::parse(info->body);
  ASSERT_EQ(pj.size(), 2u);
  EXPECT_EQ(pj[0]["oid"], git_blob_sha1_hex("x1"));
  EXPECT_EQ(pj[1]["type"], "directory");
}

TEST_F(ServerTest, ResolveRegularFileHeadersRangesAndConditional) {
  create_repo("model", "acme", "m");
  const std::string content = "Hello, World!";
  ASSERT_EQ(commit_files("models/acme/m", "main", {{"dir/hello.txt", content}})->status, 200);
  auto commit = head("models/acme/m");
  auto h = client_->Head("/acme/m/resolve/main/dir/hello.txt");
  ASSERT_EQ(h->status, 200);
  EXPECT_EQ(h->get_header_value("ETag"), "\"b45ef6fec89518d314f546fd6c3025367b721684\"");
  EXPECT_EQ(h->get_header_value("X-Repo-Commit"), commit);
  EXPECT_EQ(h->get_header_value("Content-Length"), "13");
  EXPECT_EQ(h->get_header_value("Accept-Ranges"), "bytes");
  EXPECT_EQ(client_->Get("/acme/m/resolve/" + commit + "/dir/hello.txt")->body, content);
  EXPECT_EQ(client_->Get("/models/acme/m/resolve/main/dir/hello.txt")->body, content);

  auto part = client_->Get("/acme/m/resolve/main/dir/hello.txt", {{"Range", "bytes=7-"}});
  EXPECT_EQ(part->status, 206);
  EXPECT_EQ(part->body, "World!");
  EXPECT_EQ(part->get_header_value("Content-Range"), "bytes 7-12/13");
  auto suffix = client_->Get("/acme/m/resolve/main/dir/hello.txt", {{"Range", "bytes=-6"}});
  EXPECT_EQ(suffix->body, "World!");
  auto bad = client_->Get("/acme/m/resolve/main/dir/hello.txt", {{"Range", "bytes=50-"}});
  EXPECT_EQ(bad->status, 416);
  EXPECT_EQ(bad->get_header_value("Content-Range"), "bytes */13");
  auto cached = client_->Get("/acme/m/resolve/main/dir/hello.txt",
                             {{"If-None-Match", "\"b45ef6fec89518d314f546fd6c3025367b721684\""}});
  EXPECT_EQ(cached->status, 304);

  auto missing = client_->Head("/acme/m/resolve/main/nope.txt");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "EntryNotFound");
  EXPECT_EQ(missing->get_header_value("X-Error-Message"), "Entry not found");
  EXPECT_EQ(missing->get_header_value("X-Repo-Commit"), commit);
  auto badrev = client_->Head("/acme/m/resolve/v7/dir/hello.txt");
  EXPECT_EQ(badrev->get_header_value("X-Error-Code"), "RevisionNotFound");
}

TEST_F(ServerTest, ResolveLfsFileRedirectsToBlobUrl) {
  create_repo("kernel", "acme", "relu");
  std::string blob(100000, '\0');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>(i * 7);
  upload_lfs("kernels/acme/relu", blob);
  auto sha = sha256_hex(blob);
  std::string line = json{{"key", "lfsFile"}, {"value", {{"path", "w.bin"}, {"algo", "sha256"}, {"oid", sha}, {"size", blob.size()}}}}.dump();
  auto c = client_->Post("/api/kernels/acme/relu/commit/main",
                         R"({"key":"header","value":{"summary":"lfs"}})" "\n" + line + "\n", "application/x-ndjson");
  ASSERT_EQ(c->status, 200) << c->body;
  auto commit = json::parse(c->body)["commitOid"].get<std::string>();

  auto h = client_->Head("/kernels/acme/relu/resolve/main/w.bin");
  ASSERT_EQ(h->status, 302);
  EXPECT_EQ(h->get_header_value("X-Linked-Etag"), "\"" + sha + "\"");
  EXPECT_EQ(h->get_header_value("X-Linked-Size"), "100000");
  EXPECT_EQ(h->get_header_value("X-Repo-Commit"), commit);
  auto location = h->get_header_value("Location");
  auto path = location.substr(location.find('/', 7));
  auto final_head = client_->Head(path);
  EXPECT_EQ(final_head->get_header_value("ETag"), "\"" + sha + "\"");
  EXPECT_EQ(final_head->get_header_value("X-Repo-Commit"), commit);
  EXPECT_EQ(final_head->get_header_value("Content-Length"), "100000");
  auto got = client_->Get(path);
  EXPECT_EQ(got->body, blob);
  auto tail = client_->Get(path, {{"Range", "bytes=99990-99999"}});
  EXPECT_EQ(tail->status, 206);
  EXPECT_EQ(tail->body, blob.substr(99990));
  // A tampered signature is refused.
  EXPECT_EQ(client_->Get(path.substr(0, path.size() - 1) + (path.back() == '0' ? "1" : "0"))->status, 403);

  auto tree = json::parse(client_->Get("/api/kernels/acme/relu/tree/main")->body);
  auto entry = tree[1];
  EXPECT_EQ(entry["path"], "w.bin");
  EXPECT_EQ(entry["lfs"]["oid"], sha);
  EXPECT_EQ(entry["lfs"]["pointerSize"], 131);  // 127 for a 2-digit size (see tree_hash_test) + 4 digits
}

class AuthTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.tokens.push_back(TokenGrant{"hf_write", "alice", true, {"acme"}, {"alice", "acme"}});
    c.tokens.push_back(TokenGrant{"hf_read", "bob", false, {}, {}});
    c.tokens.push_back(TokenGrant{"hf_other", "carol", false, {}, {"other"}});
    c.trusted_orgs = {"acme"};
    return c;
  }
};

TEST_F(AuthTest, TokensRightsAndPrivateRepos) {
  EXPECT_EQ(create_repo("kernel", "acme", "k")->status, 401);
  auto ro = create_repo("kernel", "acme", "k", "hf_read");
  EXPECT_EQ(ro->status, 403);
  EXPECT_EQ(ro->get_header_value("X-Error-Code"), "Forbidden");
  EXPECT_EQ(create_repo("kernel", "other", "k", "hf_write")->status, 403);  // namespace not granted
  ASSERT_EQ(create_repo("kernel", "acme", "k", "hf_write")->status, 200);
  ASSERT_EQ(create_repo("kernel", "acme", "secret", "hf_write", true)->status, 200);

  EXPECT_EQ(client_->Get("/api/kernels/acme/k")->status, 200);  // anonymous read of public repos
  auto anon = client_->Get("/api/kernels/acme/secret");
  EXPECT_EQ(anon->status, 401);
  EXPECT_FALSE(anon->has_header("X-Error-Code"));
  EXPECT_EQ(client_->Get("/api/kernels/acme/secret", auth("hf_read"))->status, 200);  // bob: any namespace
  auto bad = client_->Get("/api/kernels/acme/k", auth("hf_nope"));
  EXPECT_EQ(bad->status, 401);
  EXPECT_EQ(bad->get_header_value("X-Error-Message"), "Invalid credentials in Authorization header");

  auto write_ro = commit_files("kernels/acme/k", "main", {{"a", "b"}}, "hf_read");
  EXPECT_EQ(write_ro->status, 403);
  EXPECT_EQ(head("kernels/acme/k"), json::parse(client_->Get("/api/kernels/acme/k")->body)["sha"]);

  auto who = client_->Get("/api/whoami-v2", auth("hf_write"));
  ASSERT_EQ(who->status, 200);
  auto w = json::parse(who->body);
  EXPECT_EQ(w["name"], "alice");
  EXPECT_EQ(w["orgs"][0]["name"], "acme");
  EXPECT_EQ(w["auth"]["accessToken"]["role"], "write");
  EXPECT_EQ(client_->Get("/api/whoami-v2")->status, 401);

  EXPECT_EQ(client_->Get("/api/kernels/acme/secret/auth-check", auth("hf_read"))->status, 200);
  EXPECT_EQ(client_->Get("/api/kernels/acme/secret/auth-check/write", auth("hf_read"))->status, 403);
  EXPECT_EQ(client_->Get("/api/kernels/acme/secret/auth-check/write", auth("hf_write"))->status, 200);
  EXPECT_EQ(client_->Put("/api/kernels/acme/secret/settings", auth("hf_read"), R"({"visibility":"public"})",
                         "application/json")->status, 403);
  ASSERT_EQ(client_->Put("/api/kernels/acme/secret/settings", auth("hf_write"), R"({"visibility":"public"})",
                         "application/json")->status, 200);
  EXPECT_EQ(client_->Get("/api/kernels/acme/secret")->status, 200);  // now public

  EXPECT_EQ(json::parse(client_->Get("/api/organizations/acme/overview")->body)["trustedKernelPublisher"], true);
  EXPECT_EQ(json::parse(client_->Get("/api/organizations/x/overview")->body)["trustedKernelPublisher"], false);
  EXPECT_EQ(client_->Get("/api/organizations/bob/overview")->status, 404);  // a user, not an org
}

// The history names who committed: the token's user, as the Hub names the account.
TEST_F(AuthTest, CommitsNameTheTokensUser) {
  ASSERT_EQ(create_repo("model", "acme", "who", "hf_write")->status, 200);
  ASSERT_EQ(commit_files("models/acme/who", "main", {{"a.txt", "a"}}, "hf_write")->status, 200);
  auto commits = json::parse(client_->Get("/api/models/acme/who/commits/main", auth("hf_read"))->body);
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[0]["authors"], json::parse(R"([{"user": "alice"}])"));
  EXPECT_EQ(commits[1]["authors"], json::parse(R"([{"user": "alice"}])"));  // the first commit: the creator
}

TEST_F(AuthTest, GatedReposNeedATokenToDownload) {
  ASSERT_EQ(create_repo("model", "acme", "g", "hf_write")->status, 200);
  ASSERT_EQ(commit_files("models/acme/g", "main", {{"w.txt", "w"}}, "hf_write")->status, 200);
  ASSERT_EQ(client_->Put("/api/models/acme/g/settings", auth("hf_write"), R"({"gated":"auto"})", "application/json")->status, 200);
  EXPECT_EQ(json::parse(client_->Get("/api/models/acme/g")->body)["gated"], "auto");  // metadata stays readable
  auto anon = client_->Head("/acme/g/resolve/main/w.txt");
  EXPECT_EQ(anon->status, 401);
  EXPECT_EQ(anon->get_header_value("X-Error-Code"), "GatedRepo");
  // auto: as on the Hub, a user who never asked for access is refused (this server takes no requests)
  auto never_asked = client_->Head("/acme/g/resolve/main/w.txt", auth("hf_other"));
  EXPECT_EQ(never_asked->status, 403);
  EXPECT_EQ(never_asked->get_header_value("X-Error-Code"), "GatedRepo");
  EXPECT_EQ(client_->Head("/acme/g/resolve/main/w.txt", auth("hf_write"))->status, 200);  // the namespace's token
  ASSERT_EQ(client_->Put("/api/models/acme/g/settings", auth("hf_write"), R"({"gated":"manual"})", "application/json")->status, 200);
  auto denied = client_->Head("/acme/g/resolve/main/w.txt", auth("hf_other"));
  EXPECT_EQ(denied->status, 403);
  EXPECT_EQ(denied->get_header_value("X-Error-Code"), "GatedRepo");
  EXPECT_EQ(client_->Get("/acme/g/resolve/main/w.txt", auth("hf_read"))->body, "w");
  // auth-check answers as the download would (huggingface_hub's auth_check raises GatedRepoError).
  EXPECT_EQ(client_->Get("/api/models/acme/g/auth-check")->status, 401);
  auto check = client_->Get("/api/models/acme/g/auth-check", auth("hf_other"));
  EXPECT_EQ(check->status, 403);
  EXPECT_EQ(check->get_header_value("X-Error-Code"), "GatedRepo");
  EXPECT_EQ(client_->Get("/api/models/acme/g/auth-check", auth("hf_read"))->status, 200);
  EXPECT_EQ(client_->Put("/api/models/acme/g/settings", auth("hf_write"), R"({"gated":"yes"})", "application/json")->status, 400);
}

// Access requests: a writer grants, rejects and accepts again; an accepted user downloads the files
// of the gated repo, a rejected one is refused again; only writers of the namespace manage them.
TEST_F(AuthTest, AcceptedAccessRequestsOpenAGatedRepo) {
  ASSERT_EQ(create_repo("model", "acme", "ga", "hf_write")->status, 200);
  ASSERT_EQ(commit_files("models/acme/ga", "main", {{"w.txt", "w"}}, "hf_write")->status, 200);
  ASSERT_EQ(client_->Put("/api/models/acme/ga/settings", auth("hf_write"), R"({"gated":"manual"})", "application/json")->status, 200);
  const std::string base = "/api/models/acme/ga/user-access-request/";
  EXPECT_EQ(client_->Head("/acme/ga/resolve/main/w.txt", auth("hf_other"))->status, 403);
  EXPECT_EQ(client_->Post(base + "grant", auth("hf_other"), R"({"user":"carol"})", "application/json")->status, 403);
  ASSERT_EQ(client_->Post(base + "grant", auth("hf_write"), R"({"user":"carol"})", "application/json")->status, 200);
  EXPECT_EQ(client_->Post(base + "grant", auth("hf_write"), R"({"user":"carol"})", "application/json")->status, 409);
  EXPECT_EQ(client_->Get("/acme/ga/resolve/main/w.txt", auth("hf_other"))->body, "w");
  auto accepted = json::parse(client_->Get(base + "accepted", auth("hf_write"))->body);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(accepted[0]["user"]["user"], "carol");
  EXPECT_EQ(accepted[0]["status"], "accepted");
  EXPECT_EQ(client_->Get(base + "accepted", auth("hf_other"))->status, 403);
  ASSERT_EQ(client_->Post(base + "handle", auth("hf_write"), R"({"user":"carol","status":"rejected"})",
                          "application/json")->status, 200);
  EXPECT_EQ(client_->Head("/acme/ga/resolve/main/w.txt", auth("hf_other"))->status, 403);
  EXPECT_TRUE(json::parse(client_->Get(base + "accepted", auth("hf_write"))->body).empty());
  auto rejected = json::parse(client_->Get(base + "rejected", auth("hf_write"))->body);
  ASSERT_EQ(rejected.size(), 1u);
  // Accepted again by its request id.
  ASSERT_EQ(client_->Post(base + "handle", auth("hf_write"),
                          json{{"requestId", rejected[0]["requestId"]}, {"status", "accepted"}}.dump(),
                          "application/json")->status, 200);
  EXPECT_EQ(client_->Head("/acme/ga/resolve/main/w.txt", auth("hf_other"))->status, 200);
  EXPECT_EQ(client_->Post(base + "handle", auth("hf_write"), R"({"user":"dave","status":"accepted"})",
                          "application/json")->status, 404);  // no request from dave
}

class ClosedReadTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.anonymous_read = false;
    c.tokens.push_back(TokenGrant{"hf_r", "reader", false, {}, {}});
    c.tokens.push_back(TokenGrant{"hf_w", "writer", true, {}, {}});
    return c;
  }
};

TEST_F(ClosedReadTest, AnonymousReadsOffNeedsAToken) {
  ASSERT_EQ(create_repo("model", "acme", "m", "hf_w")->status, 200);
  EXPECT_EQ(client_->Get("/api/models/acme/m")->status, 401);
  EXPECT_EQ(client_->Head("/acme/m/resolve/main/.gitattributes")->status, 401);
  EXPECT_EQ(client_->Get("/api/models/acme/m", auth("hf_r"))->status, 200);
  EXPECT_EQ(client_->Head("/acme/m/resolve/main/.gitattributes", auth("hf_r"))->status, 200);
}

class ResolveCacheTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    c.resolve_cache_redirects = true;
    return c;
  }
};

TEST_F(ResolveCacheTest, BranchRequestsRedirectRelativeToResolveCache) {
  create_repo("kernel", "acme", "relu");
  ASSERT_EQ(commit_files("kernels/acme/relu", "main", {{"build/x/__init__.py", "from ._ops import ops\n"}})->status, 200);
  auto commit = head("kernels/acme/relu");
  auto r = client_->Head("/kernels/acme/relu/resolve/main/build/x/__init__.py");
  ASSERT_EQ(r->status, 307);
  auto location = r->get_header_value("Location");
  // Sent as ?etag=%22…%22; cpp-httplib's client percent-decodes header values when parsing.
  EXPECT_EQ(location, "/api/resolve-cache/kernels/acme/relu/" + commit +
                          "/build/x/__init__.py?etag=\"1cec5723464b586acbda5ab039a6248d38255033\"");
  auto final_head = client_->Head(location);
  EXPECT_EQ(final_head->status, 200);
  EXPECT_EQ(final_head->get_header_value("ETag"), "\"1cec5723464b586acbda5ab039a6248d38255033\"");
  EXPECT_EQ(final_head->get_header_value("X-Repo-Commit"), commit);
  EXPECT_EQ(final_head->get_header_value("Content-Length"), "22");
  EXPECT_EQ(client_->Get(location)->body, "from ._ops import ops\n");
  // By commit: answered directly.
  EXPECT_EQ(client_->Head("/kernels/acme/relu/resolve/" + commit + "/build/x/__init__.py")->status, 200);
}

TEST(ServerStart, WaitReturnsAfterStopFromAnotherThread) {
  TempDir dir("wait");
  ServerOptions o;
  o.root = dir.path;
  std::vector<std::string> lines;
  std::mutex mutex;
  o.request_log = [&](std::string_view line) {
    std::lock_guard lock(mutex);
    lines.emplace_back(line);
  };
  Server server(std::move(o));
  ASSERT_TRUE(server.start());
  httplib::Client c("127.0.0.1", server.port());
  EXPECT_EQ(c.Get("/api/whoami-v2")->status, 401);
  std::thread stopper([&] { server.stop(); });
  server.wait();
  stopper.join();
  EXPECT_FALSE(c.Get("/api/whoami-v2"));  // no longer listening
  std::lock_guard lock(mutex);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("\"GET /api/whoami-v2\" 401"), std::string::npos) << lines[0];
}

TEST(ServerStart, RefusesOpenWritesOnNonLoopbackAddress) {
  TempDir dir("bind");
  ServerOptions o;
  o.root = dir.path;
  o.host = "0.0.0.0";
  Server server(std::move(o));
  auto st = server.start();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
}

// A second server on a busy port must fail, not share it (SO_REUSEPORT would split the requests
// between two stores); ports outside 0-65535 are refused before binding.
TEST(ServerStart, RefusesABusyOrOutOfRangePort) {
  TempDir a("port-a"), b("port-b");
  Server first(ServerOptions{.root = a.path});
  ASSERT_TRUE(first.start());
  Server second(ServerOptions{.root = b.path, .port = first.port()});
  auto busy = second.start();
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().code, ErrorCode::Network);
  for (int port : {-1, 65536, 99999}) {
    Server bad(ServerOptions{.root = b.path, .port = port});
    auto st = bad.start();
    ASSERT_FALSE(st) << port;
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(st.error().message, "port " + std::to_string(port) + " is out of range");
  }
}

// A repo id without a namespace (the Hub's legacy `gpt2` form) is a missing repo: `RepoNotFound`, which
// huggingface_hub turns into RepositoryNotFoundError (repo_exists, file_exists, list_repo_commits). Other
// unknown routes stay `NotFound`.
TEST_F(ServerTest, RepoIdWithoutNamespaceIsRepoNotFound) {
  for (const char* path : {"/api/models/missing_repo_id", "/api/models/missing_repo_id/commits/main",
                           "/api/models/missing-repo/revision/main", "/api/datasets/missing/tree/main",
                           "/missing-repo/resolve/main/file.txt", "/datasets/missing/resolve/main/f"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_EQ(r->get_header_value("X-Error-Code"), "RepoNotFound") << path;
  }
  auto other = client_->Get("/api/nothing-here/at/all");
  EXPECT_EQ(other->get_header_value("X-Error-Code"), "NotFound");
}

}  // namespace
}  // namespace khub::localhub::testing
