// Repo ids, URL shapes and path safety (docs/protocol.md, Endpoints and repo types).
#include <gtest/gtest.h>

#include "khub/base/redact.h"
#include "khub/hub/repo.h"

namespace {
using namespace khub::hub;

TEST(Repo, UrlShapes) {
  RepoRef k{RepoType::Kernel, "kernels-community/relu"};
  RepoRef m{RepoType::Model, "kernels-community/relu"};
  EXPECT_EQ(resolve_url("https://huggingface.co", k, "refs/pr/1", "build/a b/x.so"),
            "https://huggingface.co/kernels/kernels-community/relu/resolve/refs%2Fpr%2F1/build/a%20b/x.so");
  EXPECT_EQ(resolve_url("https://huggingface.co", m, "main", "x"),
            "https://huggingface.co/kernels-community/relu/resolve/main/x");
  EXPECT_EQ(api_url("https://hf.co", k, "/refs"), "https://hf.co/api/kernels/kernels-community/relu/refs");
  EXPECT_EQ(repo_folder_name(k), "kernels--kernels-community--relu");
  EXPECT_EQ(repo_folder_name(m), "models--kernels-community--relu");
}

TEST(Repo, Validation) {
  EXPECT_TRUE(make_repo("org/name"));
  for (auto bad : {"noslash", "a/b/c", "/b", "a/", "../x", "a/..", "a/b c", "a/.hidden"})
    EXPECT_FALSE(make_repo(bad)) << bad;
  EXPECT_EQ(make_repo("x").error().code, khub::ErrorCode::InvalidArgument);
  EXPECT_TRUE(parse_repo_type("model"));
  EXPECT_FALSE(parse_repo_type("dataset"));
}

TEST(Repo, SafePaths) {
  for (auto ok : {"build/v/x.so", "a", "build/v/layers/__init__.py"}) EXPECT_TRUE(is_safe_repo_path(ok)) << ok;
  for (auto bad : {"", "/etc/passwd", "build/../x", "..", "build//x", "./x", "a\\b", "build/v/"})
    EXPECT_FALSE(is_safe_repo_path(bad)) << bad;
}

}  // namespace
