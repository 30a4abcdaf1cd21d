// ClientOptions::from_environment: cache root, token and endpoint precedence (docs/protocol.md,
// Cache layout and Tokens).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "khub/hub/options.h"

namespace {
using khub::hub::ClientOptions;

class EnvGuard {
 public:
  EnvGuard() {
    for (const char* v : kVars) unsetenv(v);
  }
  ~EnvGuard() {
    for (const char* v : kVars) unsetenv(v);
  }
  static constexpr const char* kVars[] = {
      "KERNELS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HF_TOKEN",
      "HUGGING_FACE_HUB_TOKEN", "HF_TOKEN_PATH", "HF_ENDPOINT", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
      "LOCAL_KERNELS", "HF_HUB_DISABLE_IMPLICIT_TOKEN", "HF_HUB_DISABLE_TELEMETRY", "DO_NOT_TRACK"};
};

TEST(Options, CacheRootPrecedence) {
  EnvGuard env;
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/home/u/.cache/huggingface/hub");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/xdg/huggingface/hub");
  setenv("HF_HOME", "~/hfhome", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/home/u/hfhome/hub");
  setenv("HUGGINGFACE_HUB_CACHE", "/legacy", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/legacy");
  setenv("HF_HUB_CACHE", "$HOME/hc", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/home/u/hc");
  setenv("KERNELS_CACHE", "/kc", 1);
  EXPECT_EQ(ClientOptions::from_environment()->cache_dir, "/kc");
}

TEST(Options, TokenOrderAndEndpoint) {
  EnvGuard env;
  auto dir = std::filesystem::temp_directory_path() / "khub-options-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "token") << "  hf_fromfile \n";
  setenv("HF_HOME", dir.c_str(), 1);
  EXPECT_EQ(ClientOptions::from_environment()->token, "hf_fromfile");
  setenv("HUGGING_FACE_HUB_TOKEN", "hf_legacy", 1);
  EXPECT_EQ(ClientOptions::from_environment()->token, "hf_legacy");
  setenv("HF_TOKEN", "hf_primary", 1);
  EXPECT_EQ(ClientOptions::from_environment()->token, "hf_primary");
  setenv("HF_HUB_DISABLE_IMPLICIT_TOKEN", "1", 1);
  EXPECT_EQ(ClientOptions::from_environment()->token, "");
  setenv("HF_ENDPOINT", "http://mirror.local:8080///", 1);
  EXPECT_EQ(ClientOptions::from_environment()->endpoint, "http://mirror.local:8080");
  for (const char* bad : {"mirror.local:8080", "ftp://mirror.local"}) {  // not "couldn't resolve host" later
    setenv("HF_ENDPOINT", bad, 1);
    auto o = ClientOptions::from_environment();
    ASSERT_FALSE(o) << bad;
    EXPECT_EQ(o.error().code, khub::ErrorCode::InvalidArgument);
    EXPECT_EQ(o.error().message, "HF_ENDPOINT '" + std::string(bad) + "' is not an http:// or https:// URL");
  }
  std::filesystem::remove_all(dir);
}

TEST(Options, OfflineAndLocalKernels) {
  EnvGuard env;
  EXPECT_FALSE(ClientOptions::from_environment()->offline);
  setenv("HF_HUB_OFFLINE", "yes", 1);
  EXPECT_TRUE(ClientOptions::from_environment()->offline);
  // As huggingface_hub reads them: TRANSFORMERS_OFFLINE only where HF_HUB_OFFLINE is unset or empty.
  setenv("TRANSFORMERS_OFFLINE", "1", 1);
  setenv("HF_HUB_OFFLINE", "0", 1);
  EXPECT_FALSE(ClientOptions::from_environment()->offline);
  setenv("HF_HUB_OFFLINE", "", 1);
  EXPECT_TRUE(ClientOptions::from_environment()->offline);
  unsetenv("TRANSFORMERS_OFFLINE");
  setenv("HF_HUB_OFFLINE", "yes", 1);
  setenv("LOCAL_KERNELS", "a/b=/x:c/d=/y", 1);
  auto o = ClientOptions::from_environment();
  ASSERT_EQ(o->local_kernels.size(), 2u);
  EXPECT_EQ(o->local_kernels[1].first, "c/d");
  EXPECT_EQ(o->local_kernels[1].second, "/y");
  setenv("LOCAL_KERNELS", "a/b", 1);
  auto bad = ClientOptions::from_environment();
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message,
            "Invalid LOCAL_KERNELS entry: a/b. Expected format: repo_id_1=path_1:repo_id_2=path_2");
}

TEST(Options, UserAgent) {
  ClientOptions o;
  o.user_agent = "myapp/1.0; ; broken";
  o.ua_backend = "cu130";
  o.ua_torch = "2.12";
  std::string ua = khub::hub::render_user_agent(o);
  EXPECT_EQ(ua.rfind("myapp/1.0; khub/", 0), 0u) << ua;
  EXPECT_NE(ua.find("; backend/cu130; platform/"), std::string::npos) << ua;
  EXPECT_NE(ua.find("; file_type/kernel; torch/2.12"), std::string::npos) << ua;
  EXPECT_EQ(ua.find(";;"), std::string::npos);
  o.telemetry = false;
  EXPECT_EQ(khub::hub::render_user_agent(o).find("backend/"), std::string::npos);
}

}  // namespace
