// The client's internal rules for where a token may go and how a Location resolves (white-box:
// hubclient/src/client_impl.h, http.h).
#include <gtest/gtest.h>

#include "client_impl.h"

namespace khub::hub {
namespace {

TEST(UrlRules, ASchemeCountsOnlyAtTheStart) {
  EXPECT_TRUE(detail::has_scheme("https://hub.example/x"));
  EXPECT_TRUE(detail::has_scheme("git+ssh://h/x"));
  EXPECT_FALSE(detail::has_scheme("/a?next=http://evil.example/"));
  EXPECT_FALSE(detail::has_scheme("://x"));
  EXPECT_FALSE(detail::has_scheme("1http://x"));
  EXPECT_EQ(detail::url_origin("/a?next=http://evil.example/"), "");
  EXPECT_EQ(detail::url_origin("HTTPS://Hub.Example:8080/x?y"), "https://hub.example:8080");
  EXPECT_EQ(detail::join_url("https://hub.example/api/x", "/a?next=http://evil.example/y"),
            "https://hub.example/a?next=http://evil.example/y");
  EXPECT_EQ(detail::join_url("https://hub.example/api/x", "https://cdn.example/b"), "https://cdn.example/b");
  EXPECT_EQ(detail::join_url("https://hub.example/api/x?q=1", "y"), "https://hub.example/api/y");
}

TEST(UrlRules, TheTokenGoesOnlyToHubHostsOverTheEndpointsScheme) {
  ClientOptions o;
  o.endpoint = "https://hub.example";
  o.token = "hf_secret";
  o.extra_hub_hosts = {"cdn.example"};
  HubClient::Impl impl(o);
  auto sends_token = [&](const std::string& url) {
    for (const auto& h : impl.headers_for(url))
      if (h.starts_with("Authorization:")) return true;
    return false;
  };
  EXPECT_TRUE(sends_token("https://hub.example/api/models/a/b"));
  EXPECT_TRUE(sends_token("https://cdn.example/blob"));
  EXPECT_FALSE(sends_token("http://cdn.example/blob")) << "an https hub's token must not go out over http";
  EXPECT_FALSE(sends_token("http://hub.example/api/models/a/b"));
  EXPECT_FALSE(sends_token("https://evilcdn.example/blob"));  // an extra host matches whole, not as a suffix
  EXPECT_FALSE(sends_token("https://evil.example/?next=https://hub.example/"));
  EXPECT_FALSE(sends_token("/relative/path"));
}

}  // namespace
}  // namespace khub::hub
