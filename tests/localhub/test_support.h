#pragma once
// Test helpers: a temporary store folder, an in-process server on 127.0.0.1 port 0, and a
// cpp-httplib client with the Hub calls the tests repeat.
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <string>

#include "khub/base/hash.h"
#include "khub/localhub/server.h"

namespace khub::localhub::testing {

inline std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto dir = std::filesystem::temp_directory_path() /
             ("khub-localhub-" + tag + "-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(dir);
  return dir;
}

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) : path(temp_dir(tag)) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline std::string b64(std::string_view s) {
  return base64_encode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()));
}

/// A running server plus a client bound to it.
class ServerFixture : public ::testing::Test {
 protected:
  TempDir dir_{"srv"};
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;

  virtual ServerConfig config() { return {}; }

  void SetUp() override { restart(config()); }

  void restart(ServerConfig cfg) {
    client_.reset();
    server_.reset();
    ServerOptions o;
    o.root = dir_.path / "store";
    o.config = std::move(cfg);
    o.threads = 8;
    server_ = std::make_unique<Server>(std::move(o));
    auto st = server_->start();
    ASSERT_TRUE(st) << st.error().message;
    client_ = make_client();
  }

  std::unique_ptr<httplib::Client> make_client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    c->set_read_timeout(30, 0);
    return c;
  }

  static httplib::Headers auth(const std::string& token) {
    return token.empty() ? httplib::Headers{} : httplib::Headers{{"Authorization", "Bearer " + token}};
  }

  httplib::Result create_repo(const std::string& type, const std::string& ns, const std::string& name,
                              const std::string& token = "", bool is_private = false) {
    nlohmann::json body{{"name", name}, {"organization", ns}, {"type", type}, {"private", is_private}};
    return client_->Post("/api/repos/create", auth(token), body.dump(), "application/json");
  }

  /// NDJSON commit of inline files {path: content} to `rev`.
  httplib::Result commit_files(const std::string& api_repo, const std::string& rev,
                               const std::vector<std::pair<std::string, std::string>>& files,
                               const std::string& token = "", const std::string& parent = "") {
    nlohmann::json header{{"summary", "test commit"}, {"description", ""}};
    if (!parent.empty()) header["parentCommit"] = parent;
    std::string body = nlohmann::json{{"key", "header"}, {"value", header}}.dump() + "\n";
    for (const auto& [path, content] : files) {
      body += nlohmann::json{{"key", "file"}, {"value", {{"path", path}, {"content", b64(content)}, {"encoding", "base64"}}}}
                  .dump() + "\n";
    }
    return client_->Post("/api/" + api_repo + "/commit/" + rev, auth(token), body, "application/x-ndjson");
  }

  std::string head(const std::string& api_repo, const std::string& rev = "main") {
    auto r = client_->Get("/api/" + api_repo + "/revision/" + rev);
    if (!r || r->status != 200) return {};
    return nlohmann::json::parse(r->body)["sha"].get<std::string>();
  }

  /// Uploads `data` through the LFS batch API (basic or multipart, as the server answers).
  void upload_lfs(const std::string& web_repo, const std::string& data, const std::string& token = "");
};

inline void ServerFixture::upload_lfs(const std::string& web_repo, const std::string& data, const std::string& token) {
  auto oid = sha256_hex(data);
  nlohmann::json batch{{"operation", "upload"}, {"transfers", {"basic", "multipart"}}, {"hash_algo", "sha256"},
                       {"objects", {{{"oid", oid}, {"size", data.size()}}}}};
  auto r = client_->Post("/" + web_repo + ".git/info/lfs/objects/batch", auth(token), batch.dump(),
                         "application/vnd.git-lfs+json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto obj = nlohmann::json::parse(r->body)["objects"][0];
  if (!obj.contains("actions")) return;
  auto upload = obj["actions"]["upload"];
  auto path_of = [](const std::string& url) { return url.substr(url.find('/', 7)); };
  if (upload.contains("header") && upload["header"].contains("chunk_size")) {
    auto chunk = std::stoull(upload["header"]["chunk_size"].get<std::string>());
    nlohmann::json parts = nlohmann::json::array();
    for (std::size_t n = 1; (n - 1) * chunk < data.size(); ++n) {
      char key[16];
      std::snprintf(key, sizeof key, "%05zu", n);
      auto part = data.substr((n - 1) * chunk, chunk);
      auto pr = client_->Put(path_of(upload["header"][key].get<std::string>()), part, "application/octet-stream");
      ASSERT_TRUE(pr);
      ASSERT_EQ(pr->status, 200) << pr->body;
      parts.push_back({{"partNumber", n}, {"etag", pr->get_header_value("ETag")}});
    }
    auto done = client_->Post(path_of(upload["href"].get<std::string>()),
                              nlohmann::json{{"oid", oid}, {"parts", parts}}.dump(), "application/vnd.git-lfs+json");
    ASSERT_TRUE(done);
    ASSERT_EQ(done->status, 200) << done->body;
  } else {
    auto pr = client_->Put(path_of(upload["href"].get<std::string>()), data, "application/octet-stream");
    ASSERT_TRUE(pr);
    ASSERT_EQ(pr->status, 200) << pr->body;
  }
  auto verify = obj["actions"]["verify"]["href"].get<std::string>();
  auto vr = client_->Post(path_of(verify), auth(token), nlohmann::json{{"oid", oid}, {"size", data.size()}}.dump(),
                          "application/json");
  ASSERT_TRUE(vr);
  ASSERT_EQ(vr->status, 200) << vr->body;
}

}  // namespace khub::localhub::testing
