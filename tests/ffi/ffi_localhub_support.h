#pragma once
// The local hub in process (khub::localhub on 127.0.0.1) with the bundled kernels' builds pushed whole
// (torch, stable-ABI and tvm-ffi variants) as org/<name> version 1, for the khub::ffi e2e and interop tests.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "khub/ffi.h"
#include "khub/http/transport.h"
#include "khub/localhub/server.h"
#include "khub/publish/build_tree.h"
#include "khub/publish/push.h"

namespace khub::ffi::test {

inline std::unique_ptr<localhub::Server> start_hub(const std::filesystem::path& root) {
  localhub::ServerOptions so;
  so.root = root;
  so.threads = 8;
  so.config.tokens.push_back({"hf_ffi_token", "tester", true, {"org"}, {}});
  so.config.trusted_orgs = {"org"};
  auto server = std::make_unique<localhub::Server>(std::move(so));
  EXPECT_TRUE(server->start());
  return server;
}

inline Expected<publish::PushResult> push(const std::filesystem::path& build, const localhub::Server& server,
                                          const std::string& repo) {
  publish::PushOptions po;
  po.endpoint = server.url();
  po.token = "hf_ffi_token";
  po.repo_id = repo;
  po.version = 1;
  po.abi_policy = publish::PushOptions::AbiPolicy::Off;  // checked by kernels_khub_check_*
  po.retry.base = std::chrono::milliseconds(1);
  auto transport = http::make_curl_transport();
  KHUB_TRY(auto tree, publish::discover_build(build));
  return publish::push_build(tree, po, *transport);
}

inline GetKernelOptions version_1_from(const localhub::Server& server, const std::filesystem::path& cache) {
  GetKernelOptions o;
  o.version = 1;
  o.endpoint = server.url();
  o.cache_dir = cache;
  return o;
}

}  // namespace khub::ffi::test
