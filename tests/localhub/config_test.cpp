// Config file, --token and --fault parsing (localhub/src/config.cpp).
#include "khub/localhub/config.h"

#include <gtest/gtest.h>

namespace khub::localhub {
namespace {

TEST(Config, ParsesEveryKey) {
  auto c = parse_config(R"({
    "anonymous_read": false,
    "tokens": [{"token": "hf_w", "user": "alice", "fullname": "Alice A.", "access": "write", "orgs": ["acme"],
                "namespaces": ["alice", "acme"]},
               {"token": "hf_r"}],
    "trusted_orgs": ["kernels-community"],
    "lfs_chunk_size": 1048576, "max_regular_file": 2048, "max_commit_body": 4096, "max_object_size": 8192,
    "blob_base_url": "http://localhost:{port}",
    "resolve_cache_redirects": true,
    "faults": ["/api/*=503,count=2"],
    "organizations": [{"name": "acme", "fullname": "Acme Corp", "private_by_default": true}, {"name": "open"}]
  })");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_FALSE(c->anonymous_read);
  ASSERT_EQ(c->tokens.size(), 2u);
  EXPECT_EQ(c->tokens[0].user, "alice");
  EXPECT_TRUE(c->tokens[0].write);
  EXPECT_EQ(c->tokens[0].namespaces.size(), 2u);
  EXPECT_FALSE(c->tokens[1].write);  // read is the default access
  EXPECT_EQ(c->trusted_orgs, std::vector<std::string>{"kernels-community"});
  EXPECT_EQ(c->lfs_chunk_size, 1048576u);
  EXPECT_EQ(c->max_regular_file, 2048u);
  EXPECT_EQ(c->blob_base_url, "http://localhost:{port}");
  EXPECT_TRUE(c->resolve_cache_redirects);
  ASSERT_EQ(c->faults.size(), 1u);
  EXPECT_EQ(c->faults[0].status, 503);
  EXPECT_EQ(c->faults[0].count, 2);
  EXPECT_EQ(c->tokens[0].fullname, "Alice A.");
  ASSERT_EQ(c->organizations.size(), 2u);
  ASSERT_NE(c->find_organization("ACME"), nullptr);  // names are case-insensitive
  EXPECT_EQ(c->find_organization("acme")->fullname, "Acme Corp");
  EXPECT_TRUE(c->find_organization("acme")->private_by_default);
  EXPECT_FALSE(c->find_organization("open")->private_by_default);
  EXPECT_EQ(c->find_organization("nobody"), nullptr);
}

TEST(Config, RejectsBadShapesWithTheKeyName) {
  struct Case { const char* json; const char* key; };
  for (auto [json, key] : {Case{"[]", "JSON object"}, Case{R"({"tokens": [{"user": "x"}]})", "token"},
                           Case{R"({"tokens": [{"token": "t", "access": "admin"}]})", "access"},
                           Case{R"({"lfs_chunk_size": 0})", "lfs_chunk_size"},
                           Case{R"({"trusted_orgs": "acme"})", "trusted_orgs"},
                           Case{R"({"faults": ["nonsense"]})", "fault"},
                           Case{R"({"organizations": [{"fullname": "x"}]})", "organizations"},
                           Case{R"({"organizations": [{"name": "o", "private_by_default": "yes"}]})", "private_by_default"},
                           Case{R"({"organizations": [{"name": "o", "privat": true}]})", "unknown key \"privat\""},
                           // Misspelt keys: no tokens at all (an open server), or a read token.
                           Case{R"({"tokns": [{"token": "t", "access": "write"}]})", "unknown key \"tokns\""},
                           Case{R"({"tokens": [{"token": "t", "acess": "write"}]})", "unknown key \"acess\" in a tokens entry"}}) {
    auto c = parse_config(json);
    ASSERT_FALSE(c) << json;
    EXPECT_EQ(c.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(c.error().message.find(key), std::string::npos) << c.error().message;
  }
}

TEST(Config, MissingFileIsIo) {
  auto c = load_config("/nonexistent/khub.json");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::Io);
}

TEST(TokenFlag, AccessSuffix) {
  EXPECT_TRUE(parse_token_flag("hf_abc")->write);
  EXPECT_FALSE(parse_token_flag("hf_abc:read")->write);
  EXPECT_EQ(parse_token_flag("hf_abc:write")->token, "hf_abc");
  auto typo = parse_token_flag("hf_abc:raed");  // a typo must not become a write token
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().message, "--token: unknown access 'raed' in 'hf_abc:raed'; use TOKEN, TOKEN:read or TOKEN:write");
  EXPECT_FALSE(parse_token_flag(":read"));
}

TEST(FaultSpec, Actions) {
  auto drop = parse_fault("GET /lfs-blob/*=drop-mid-body,count=1");
  ASSERT_TRUE(drop);
  EXPECT_EQ(drop->pattern, "GET /lfs-blob/*");
  EXPECT_EQ(drop->action, FaultAction::DropMidBody);
  EXPECT_EQ(drop->count, 1);
  auto rate = parse_fault("/api/*=429:7");
  ASSERT_TRUE(rate);
  EXPECT_EQ(rate->action, FaultAction::RateLimit);
  EXPECT_EQ(rate->seconds, 7);
  EXPECT_EQ(rate->count, -1);
  EXPECT_EQ(parse_fault("*=slow:250")->millis, 250);
  EXPECT_EQ(parse_fault("*=500")->status, 500);
  EXPECT_EQ(parse_fault("*=ignore-range")->action, FaultAction::IgnoreRange);
  for (auto bad : {"*", "=500", "*=200", "*=slow:x", "*=500,count=0", "*=explode"}) {
    EXPECT_FALSE(parse_fault(bad)) << bad;
  }
}

}  // namespace
}  // namespace khub::localhub
