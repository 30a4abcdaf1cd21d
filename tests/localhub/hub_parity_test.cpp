// Answers that match the Hub where huggingface_hub's own tests look (issue 33): backslash paths,
// pull requests opened through discussions (also by readers), repo moves and their redirects,
// super-squash, LFS file listing and deletion, short commit ids, gated "auto", whoami profiles.
#include "test_support.h"

namespace khub::localhub::testing {
namespace {

using nlohmann::json;

class HubParityTest : public ServerFixture {
 protected:
  ServerConfig config() override {
    ServerConfig c;
    TokenGrant alice{"hf_alice", "alice", true, {"acme"}, {"alice", "acme"}};
    alice.fullname = "Alice A.";
    c.tokens.push_back(alice);
    c.tokens.push_back(TokenGrant{"hf_bob", "bob", true, {}, {"bob"}});      // writes elsewhere only
    c.tokens.push_back(TokenGrant{"hf_carol", "carol", true, {}, {"carol"}});
    c.organizations.push_back(Organization{"acme", "Acme Corp", false});
    c.organizations.push_back(Organization{"vault", "", true});
    c.tokens.push_back(TokenGrant{"hf_vault", "vic", true, {"vault"}, {"vault"}});
    return c;
  }
  void SetUp() override {
    ServerFixture::SetUp();
    ASSERT_EQ(create_repo("model", "alice", "m", "hf_alice")->status, 200);
  }
  httplib::Result ndjson(const std::string& api_repo, const std::string& rev, const std::vector<json>& ops,
                         const std::string& token, const std::string& query = "") {
    std::string body = json{{"key", "header"}, {"value", {{"summary", "change"}}}}.dump() + "\n";
    for (const auto& op : ops) body += op.dump() + "\n";
    return client_->Post("/api/" + api_repo + "/commit/" + rev + query, auth(token), body, "application/x-ndjson");
  }
  static json file_op(const std::string& path, const std::string& content) {
    return {{"key", "file"}, {"value", {{"path", path}, {"content", b64(content)}, {"encoding", "base64"}}}};
  }
  static json lfs_op(const std::string& path, const std::string& content) {
    return {{"key", "lfsFile"}, {"value", {{"path", path}, {"algo", "sha256"}, {"oid", sha256_hex(content)},
                                           {"size", content.size()}}}};
  }
  json get_json(const std::string& path, const std::string& token = "") {
    auto r = client_->Get(path, auth(token));
    EXPECT_TRUE(r);
    if (!r || r->status != 200) return json{{"status", r ? r->status : 0}, {"body", r ? r->body : ""}};
    return json::parse(r->body);
  }
  std::vector<std::string> files(const std::string& api_repo, const std::string& rev) {
    std::vector<std::string> out;
    for (const auto& e : get_json("/api/" + api_repo + "/tree/" + rev + "?recursive=true")) {
      if (e["type"] == "file") out.push_back(e["path"]);
    }
    return out;
  }
};

TEST_F(HubParityTest, BackslashesAreOrdinaryUnlessThePathStartsAboveTheRoot) {
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("folder/..\\..\\file", "x")}, "hf_alice")->status, 200);
  auto got = client_->Get("/alice/m/resolve/main/folder/..%5C..%5Cfile");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body, "x");
  auto pre = client_->Post("/api/models/alice/m/preupload/main", auth("hf_alice"),
                           R"({"files":[{"path":"..\\ddd","size":1,"sample":""}]})", "application/json");
  ASSERT_TRUE(pre);
  EXPECT_EQ(pre->status, 422) << pre->body;  // what upload_file("..\\ddd") gets from the Hub
  EXPECT_EQ(ndjson("models/alice/m", "main", {file_op("..\\ddd", "x")}, "hf_alice")->status, 400);
}

TEST_F(HubParityTest, ReadersOpenPullRequestsAndPushToTheirOwn) {
  auto opened = client_->Post("/api/models/alice/m/discussions", auth("hf_bob"),
                              R"({"title":"  Add weights  ","description":"please","pullRequest":true})",
                              "application/json");
  ASSERT_TRUE(opened);
  ASSERT_EQ(opened->status, 200) << opened->body;
  EXPECT_EQ(json::parse(opened->body)["num"], 1);
  auto pr = get_json("/api/models/alice/m/discussions/1?diff=1");
  EXPECT_EQ(pr["title"], "Add weights");
  EXPECT_EQ(pr["isPullRequest"], true);
  EXPECT_EQ(pr["status"], "draft");
  EXPECT_EQ(pr["author"]["name"], "bob");
  EXPECT_EQ(pr["changes"]["base"], "refs/heads/main");
  EXPECT_EQ(pr["events"][0]["data"]["latest"]["raw"], "please");
  EXPECT_EQ(head("models/alice/m", "refs%2Fpr%2F1"), head("models/alice/m"));  // the ref starts at main

  // bob may push to his pull request, not to main nor to carol's
  EXPECT_EQ(ndjson("models/alice/m", "refs%2Fpr%2F1", {file_op("w.txt", "bob")}, "hf_bob")->status, 200);
  EXPECT_EQ(ndjson("models/alice/m", "main", {file_op("w.txt", "bob")}, "hf_bob")->status, 403);
  EXPECT_EQ(ndjson("models/alice/m", "refs%2Fpr%2F1", {file_op("c.txt", "c")}, "hf_carol")->status, 403);
  EXPECT_EQ(files("models/alice/m", "main"), std::vector<std::string>{".gitattributes"});

  // create_pr=1: a reader opens one with the commit (preupload and the Xet write token first)
  auto pre = client_->Post("/api/models/alice/m/preupload/main?create_pr=1", auth("hf_carol"),
                           R"({"files":[{"path":"c.txt","size":1,"sample":""}]})", "application/json");
  EXPECT_EQ(pre->status, 200) << pre->body;
  EXPECT_EQ(client_->Get("/api/models/alice/m/xet-write-token/main?create_pr=1", auth("hf_carol"))->status, 200);
  EXPECT_EQ(client_->Get("/api/models/alice/m/xet-write-token/main", auth("hf_carol"))->status, 403);
  auto with_commit = ndjson("models/alice/m", "main", {file_op("c.txt", "c")}, "hf_carol", "?create_pr=1");
  ASSERT_EQ(with_commit->status, 200) << with_commit->body;
  EXPECT_NE(json::parse(with_commit->body)["pullRequestUrl"].get<std::string>().find("/discussions/2"), std::string::npos);
  EXPECT_EQ(get_json("/api/models/alice/m/discussions/2")["author"]["name"], "carol");
  EXPECT_EQ(get_json("/api/models/alice/m/discussions")["count"], 2);
  // anonymous callers open nothing; a title must say something
  EXPECT_EQ(client_->Post("/api/models/alice/m/discussions", R"({"title":"abc"})", "application/json")->status, 401);
  EXPECT_EQ(client_->Post("/api/models/alice/m/discussions", auth("hf_bob"), R"({"title":" a "})", "application/json")->status,
            400);
  EXPECT_EQ(client_->Get("/api/models/alice/m/discussions/9")->status, 404);
}

TEST_F(HubParityTest, DiscussionsTakeCommentsTitlesStatusesAndPullRequestsMerge) {
  auto post = [&](const std::string& path, const json& body, const std::string& token) {
    return client_->Post("/api/models/alice/m/discussions" + path, auth(token), body.dump(), "application/json");
  };
  ASSERT_EQ(post("", {{"title", "Add x"}, {"pullRequest", true}}, "hf_bob")->status, 200);
  ASSERT_EQ(post("", {{"title", "A question"}}, "hf_carol")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "refs%2Fpr%2F1", {file_op("x.txt", "x")}, "hf_bob")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("m.txt", "m")}, "hf_alice")->status, 200);  // main moves on

  auto comment = post("/2/comment", {{"comment", "an answer"}}, "hf_bob");
  ASSERT_EQ(comment->status, 200) << comment->body;
  EXPECT_EQ(json::parse(comment->body)["newMessage"]["data"]["latest"]["raw"], "an answer");
  EXPECT_EQ(post("/2/title", {{"title", "Renamed"}}, "hf_bob")->status, 403);  // not bob's
  auto renamed = post("/2/title", {{"title", "Renamed"}}, "hf_carol");
  ASSERT_EQ(renamed->status, 200);
  EXPECT_EQ(json::parse(renamed->body)["newTitle"]["data"], json({{"from", "A question"}, {"to", "Renamed"}}));
  ASSERT_EQ(post("/2/status", {{"status", "closed"}}, "hf_alice")->status, 200);  // a writer may
  EXPECT_EQ(post("/2/status", {{"status", "published"}}, "hf_alice")->status, 400);
  auto two = get_json("/api/models/alice/m/discussions/2");
  EXPECT_EQ(two["title"], "Renamed");
  EXPECT_EQ(two["status"], "closed");
  ASSERT_EQ(two["events"].size(), 4u);  // opening comment, comment, title, status
  auto first_id = two["events"][0]["id"].get<std::string>();
  EXPECT_EQ(post("/2/comment/" + first_id + "/edit", {{"content", "edited"}}, "hf_bob")->status, 403);
  auto edited = post("/2/comment/" + first_id + "/edit", {{"content", "edited"}}, "hf_carol");
  ASSERT_EQ(edited->status, 200) << edited->body;
  EXPECT_EQ(get_json("/api/models/alice/m/discussions/2")["events"][0]["data"]["edited"], true);

  auto nums = [&](const std::string& query) {
    std::vector<int> out;
    auto page = get_json("/api/models/alice/m/discussions" + query);
    EXPECT_TRUE(page.contains("discussions")) << page;
    for (const auto& d : page["discussions"]) out.push_back(d["num"]);
    return out;
  };
  EXPECT_EQ(nums(""), (std::vector<int>{2, 1}));
  EXPECT_EQ(nums("?type=pull_request"), std::vector<int>{1});
  EXPECT_EQ(nums("?status=open"), std::vector<int>{1});  // a draft counts as open
  EXPECT_EQ(nums("?status=closed&author=carol"), std::vector<int>{2});

  // a draft is not merged; a reader may not merge; a writer merges what the pull request changed
  EXPECT_EQ(post("/1/merge", json::object(), "hf_alice")->status, 400);
  ASSERT_EQ(post("/1/status", {{"status", "open"}}, "hf_bob")->status, 200);
  EXPECT_EQ(post("/1/merge", json::object(), "hf_bob")->status, 403);
  auto merged = post("/1/merge", json::object(), "hf_alice");
  ASSERT_EQ(merged->status, 200) << merged->body;
  EXPECT_EQ(files("models/alice/m", "main"), (std::vector<std::string>{".gitattributes", "m.txt", "x.txt"}));
  auto one = get_json("/api/models/alice/m/discussions/1");
  EXPECT_EQ(one["status"], "merged");
  EXPECT_EQ(one["changes"]["mergeCommitId"], head("models/alice/m"));

  // both sides changed the same file: a conflict, nothing merged
  ASSERT_EQ(post("", {{"title", "Change m"}, {"pullRequest", true}}, "hf_alice")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "refs%2Fpr%2F3", {file_op("m.txt", "theirs")}, "hf_alice")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("m.txt", "ours")}, "hf_alice")->status, 200);
  ASSERT_EQ(post("/3/status", {{"status", "open"}}, "hf_alice")->status, 200);
  EXPECT_EQ(post("/3/merge", json::object(), "hf_alice")->status, 409);
  EXPECT_EQ(client_->Get("/alice/m/resolve/main/m.txt")->body, "ours");
}

TEST_F(HubParityTest, LikesCountPerRepoAndListPerUser) {
  ASSERT_EQ(create_repo("dataset", "alice", "d", "hf_alice", true)->status, 200);
  EXPECT_EQ(client_->Post("/api/models/alice/m/like", "", "application/json")->status, 401);
  for (const std::string token : {"hf_bob", "hf_carol", "hf_bob"}) {
    ASSERT_EQ(client_->Post("/api/models/alice/m/like", auth(token), "", "application/json")->status, 200);
  }
  ASSERT_EQ(client_->Post("/api/datasets/alice/d/like", auth("hf_alice"), "", "application/json")->status, 200);
  ASSERT_EQ(client_->Post("/api/models/alice/m/like", auth("hf_alice"), "", "application/json")->status, 200);
  auto info = get_json("/api/models/alice/m", "hf_bob");
  EXPECT_EQ(info["likes"], 3);
  EXPECT_EQ(info["isLikedByUser"], true);
  auto likers = get_json("/api/models/alice/m/likers");
  ASSERT_EQ(likers.size(), 3u);
  EXPECT_TRUE(std::any_of(likers.begin(), likers.end(), [](const json& u) {
    return u["user"] == "alice" && u["fullname"] == "Alice A.";
  })) << likers;
  EXPECT_EQ(get_json("/api/users/alice/likes", "hf_alice").size(), 2u);
  EXPECT_EQ(get_json("/api/users/alice/likes").size(), 1u);  // the private dataset's like shows to its readers only
  ASSERT_EQ(client_->Delete("/api/models/alice/m/like", auth("hf_bob"))->status, 200);
  EXPECT_EQ(get_json("/api/models/alice/m")["likes"], 2);
  EXPECT_EQ(get_json("/api/users/bob/likes").size(), 0u);
  auto missing = client_->Delete("/api/models/missing_repo_id/like", auth("hf_bob"));
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "RepoNotFound");
}

TEST_F(HubParityTest, MovedReposAnswerUnderTheirNewIdAndRedirectFromTheOld) {
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("f.txt", "content")}, "hf_alice")->status, 200);
  ASSERT_EQ(client_->Put("/api/models/alice/m/settings", auth("hf_alice"), R"({"private":true})", "application/json")->status, 200);
  auto moved = client_->Post("/api/repos/move", auth("hf_alice"),
                             R"({"fromRepo":"alice/m","toRepo":"acme/renamed","type":"model"})", "application/json");
  ASSERT_EQ(moved->status, 200) << moved->body;
  EXPECT_EQ(get_json("/api/models/acme/renamed", "hf_alice")["id"], "acme/renamed");
  auto old = client_->Get("/alice/m/resolve/main/f.txt", auth("hf_alice"));
  EXPECT_EQ(old->status, 307);
  EXPECT_EQ(old->get_header_value("Location"), "/acme/renamed/resolve/main/f.txt");
  EXPECT_EQ(client_->Get("/alice/m/resolve/main/f.txt", auth("hf_bob"))->status, 404);  // private: no hint
  EXPECT_EQ(client_->Get("/api/models/alice/m", auth("hf_alice"))->status, 307);

  ASSERT_EQ(create_repo("model", "acme", "other", "hf_alice")->status, 200);
  auto taken = client_->Post("/api/repos/move", auth("hf_alice"),
                             R"({"fromRepo":"acme/renamed","toRepo":"acme/other","type":"model"})", "application/json");
  EXPECT_EQ(taken->status, 409);
  EXPECT_EQ(taken->get_header_value("X-Error-Message"), "A model repository called acme/other already exists");
  EXPECT_EQ(client_->Post("/api/repos/move", auth("hf_bob"), R"({"fromRepo":"acme/other","toRepo":"bob/x"})",
                          "application/json")->status, 403);
  // a repo created under the old id takes it back from the redirect
  ASSERT_EQ(create_repo("model", "alice", "m", "hf_alice")->status, 200);
  EXPECT_EQ(client_->Get("/alice/m/resolve/main/f.txt", auth("hf_alice"))->status, 404);
}

TEST_F(HubParityTest, SuperSquashLeavesOneCommitOnTheRefOnly) {
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("a.txt", "1")}, "hf_alice")->status, 200);
  ASSERT_EQ(client_->Post("/api/models/alice/m/branch/dev", auth("hf_alice"), "{}", "application/json")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("a.txt", "2")}, "hf_alice")->status, 200);
  auto squash = client_->Post("/api/models/alice/m/super-squash/main", auth("hf_alice"), R"({"message":"squashed"})",
                              "application/json");
  ASSERT_EQ(squash->status, 200) << squash->body;
  auto main_commits = get_json("/api/models/alice/m/commits/main");
  ASSERT_EQ(main_commits.size(), 1u);
  EXPECT_EQ(main_commits[0]["title"], "squashed");
  EXPECT_EQ(client_->Get("/alice/m/resolve/main/a.txt")->body, "2");
  EXPECT_EQ(get_json("/api/models/alice/m/commits/dev").size(), 2u);  // other refs keep their history
  EXPECT_EQ(client_->Post("/api/models/alice/m/super-squash/nope", auth("hf_alice"), "{}", "application/json")->status, 404);
  EXPECT_EQ(client_->Post("/api/models/alice/m/super-squash/dev", auth("hf_bob"), "{}", "application/json")->status, 403);
}

TEST_F(HubParityTest, LfsFilesAreListedAndDeletedFromEveryCommit) {
  for (const std::string data : {"one", "two", "branch"}) upload_lfs("alice/m", data, "hf_alice");
  ASSERT_EQ(ndjson("models/alice/m", "main", {lfs_op("one.bin", "one"), file_op("t.txt", "t")}, "hf_alice")->status, 200);
  ASSERT_EQ(client_->Post("/api/models/alice/m/branch/b", auth("hf_alice"), "{}", "application/json")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "main", {lfs_op("two.bin", "two")}, "hf_alice")->status, 200);
  ASSERT_EQ(ndjson("models/alice/m", "b", {lfs_op("branch.bin", "branch")}, "hf_alice")->status, 200);
  auto listed = get_json("/api/models/alice/m/lfs-files", "hf_alice");
  ASSERT_EQ(listed.size(), 3u) << listed;
  std::vector<std::string> on_main;
  for (const auto& f : listed) {
    if (f["ref"] == "refs/heads/main") on_main.push_back(f["fileOid"]);
  }
  ASSERT_EQ(on_main.size(), 2u) << listed;
  EXPECT_EQ(client_->Get("/api/models/alice/m/lfs-files", auth("hf_bob"))->status, 403);
  auto del = client_->Post("/api/models/alice/m/lfs-files/batch", auth("hf_alice"),
                           json{{"deletions", {{"sha", on_main}, {"rewriteHistory", true}}}}.dump(), "application/json");
  ASSERT_EQ(del->status, 200) << del->body;
  listed = get_json("/api/models/alice/m/lfs-files", "hf_alice");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["filename"], "branch.bin");
  EXPECT_EQ(files("models/alice/m", "main"), (std::vector<std::string>{".gitattributes", "t.txt"}));
  EXPECT_EQ(files("models/alice/m", "b"), (std::vector<std::string>{".gitattributes", "branch.bin", "t.txt"}));
  EXPECT_EQ(get_json("/api/models/alice/m/commits/main").size(), 3u);  // history kept, rewritten
  EXPECT_EQ(client_->Get("/alice/m/resolve/main/one.bin")->status, 404);
}

TEST_F(HubParityTest, ShortCommitIdsAndTagsOnMissingRevisions) {
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("a.txt", "1")}, "hf_alice")->status, 200);
  const auto oid = head("models/alice/m");
  auto tag = client_->Post("/api/models/alice/m/tag/" + oid.substr(0, 7), auth("hf_alice"), R"({"tag":"v1"})",
                           "application/json");
  ASSERT_EQ(tag->status, 200) << tag->body;
  EXPECT_EQ(head("models/alice/m", "v1"), oid);
  EXPECT_EQ(head("models/alice/m", oid.substr(0, 10)), oid);
  // the revision is checked before the tag's name, as on the Hub
  auto missing = client_->Post("/api/models/alice/m/tag/foobar", auth("hf_alice"), R"({"tag":"invalid tag"})",
                               "application/json");
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "RevisionNotFound");
}

TEST_F(HubParityTest, DeletingAFileNamedAsAFolderDeletesTheFolder) {
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("1/a.md", "a"), file_op("1/b.md", "b"), file_op("2/c.md", "c")},
                   "hf_alice")->status, 200);
  auto del = ndjson("models/alice/m", "main", {json{{"key", "deletedFile"}, {"value", {{"path", "1"}}}}}, "hf_alice");
  ASSERT_EQ(del->status, 200) << del->body;
  EXPECT_EQ(files("models/alice/m", "main"), (std::vector<std::string>{".gitattributes", "2/c.md"}));
}

TEST_F(HubParityTest, ProfilesDefaultsAndFormattedCommits) {
  auto me = get_json("/api/whoami-v2", "hf_alice");
  EXPECT_EQ(me["fullname"], "Alice A.");
  EXPECT_EQ(me["orgs"][0]["fullname"], "Acme Corp");
  EXPECT_EQ(get_json("/api/whoami-v2", "hf_bob")["fullname"], "bob");
  EXPECT_EQ(get_json("/api/organizations/acme/overview")["fullname"], "Acme Corp");
  // an organisation whose repos are private by default; an explicit choice wins
  ASSERT_EQ(client_->Post("/api/repos/create", auth("hf_vault"), R"({"name":"s","organization":"vault"})",
                          "application/json")->status, 200);
  EXPECT_EQ(get_json("/api/models/vault/s", "hf_vault")["private"], true);
  ASSERT_EQ(create_repo("model", "vault", "p", "hf_vault", false)->status, 200);
  EXPECT_EQ(get_json("/api/models/vault/p")["private"], false);
  // the first commit is the creator's; expand[]=formatted adds HTML
  ASSERT_EQ(ndjson("models/alice/m", "main", {file_op("a.txt", "1")}, "hf_alice")->status, 200);
  auto commits = get_json("/api/models/alice/m/commits/main?expand%5B%5D=formatted");
  ASSERT_EQ(commits.size(), 2u);
  EXPECT_EQ(commits[1]["authors"][0]["user"], "alice");
  EXPECT_EQ(commits[0]["formatted"]["title"], "change");
  EXPECT_FALSE(get_json("/api/models/alice/m/commits/main")[0].contains("formatted"));
}

TEST_F(HubParityTest, ListsReposByAuthorAndSearchShowingPrivateOnesToTheirNamespace) {
  ASSERT_EQ(create_repo("model", "alice", "secret-one", "hf_alice", true)->status, 200);
  ASSERT_EQ(create_repo("model", "alice", "Open-One", "hf_alice")->status, 200);
  ASSERT_EQ(create_repo("model", "acme", "open-one", "hf_alice")->status, 200);
  ASSERT_EQ(create_repo("dataset", "alice", "data-one", "hf_alice")->status, 200);
  auto ids = [&](const std::string& query, const std::string& token) {
    std::vector<std::string> out;
    for (const auto& m : get_json("/api/models" + query, token)) out.push_back(m["id"]);
    return out;
  };
  EXPECT_EQ(ids("?author=alice&search=ONE", ""), std::vector<std::string>{"alice/Open-One"});
  EXPECT_EQ(ids("?author=alice&search=one", "hf_alice"), (std::vector<std::string>{"alice/Open-One", "alice/secret-one"}));
  EXPECT_EQ(ids("?author=alice&search=one", "hf_bob"), std::vector<std::string>{"alice/Open-One"});
  EXPECT_EQ(ids("?search=open", "").size(), 2u);
  EXPECT_EQ(ids("?search=one&filter=text-generation", "hf_alice").size(), 0u);  // no repo here has tags
  EXPECT_EQ(get_json("/api/datasets?author=alice")[0]["id"], "alice/data-one");
  auto page = client_->Get("/api/models?search=one&limit=1", auth("hf_alice"));
  ASSERT_EQ(page->status, 200);
  EXPECT_EQ(json::parse(page->body).size(), 1u);
  EXPECT_NE(page->get_header_value("Link").find("cursor=1"), std::string::npos);
  EXPECT_EQ(client_->Get("/api/models?limit=0")->status, 400);
}

TEST_F(HubParityTest, ValidateYamlReportsErrorsAndTheMissingBlock) {
  auto check = [&](const std::string& card) {
    return client_->Post("/api/validate-yaml", auth("hf_alice"), json{{"content", card}, {"repoType", "model"}}.dump(),
                         "application/json");
  };
  auto bad = check("\n---\nmodel-index: foo\n---\n\nA card.\n");
  ASSERT_EQ(bad->status, 400);
  EXPECT_EQ(json::parse(bad->body)["errors"][0]["message"], "\"model-index\" must be an array");
  auto bare = check("A card without metadata");
  ASSERT_EQ(bare->status, 200);
  EXPECT_NE(json::parse(bare->body)["warnings"][0]["message"].get<std::string>().find("Empty or missing yaml metadata"),
            std::string::npos);
  auto good = check("---\nlicense: mit\n---\n");
  EXPECT_EQ(good->status, 200);
  EXPECT_EQ(json::parse(good->body)["warnings"].size(), 0u);
}

}  // namespace
}  // namespace khub::localhub::testing
