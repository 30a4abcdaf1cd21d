#pragma once
// An in-process localhub for the server fuzz targets: a RepoStore under the fuzz scratch folder,
// open mode (no tokens: anyone may write, as `khub serve` on loopback), two repos with a first
// commit, and one request handed to the route table (dispatch_read / dispatch_write) the way
// server.cpp hands it over, body streamed through a ContentReader in small chunks.
#include <httplib.h>

#include <memory>
#include <string>

#include "dispatch.h"
#include "fuzz_util.h"
#include "khub/localhub/config.h"
#include "khub/localhub/store.h"

namespace khub_fuzz {

inline khub::localhub::Hub& local_hub() {
  using namespace khub::localhub;
  static ServerConfig config;
  static std::unique_ptr<RepoStore> store = [] {
    auto s = RepoStore::open(scratch() / "hub");
    if (!s) invariant_failed("cannot open the localhub store");
    (void)(*s)->create_repo(RepoKey{khub::RepoType::Model, "fuzz", "repo"}, false);
    (void)(*s)->create_repo(RepoKey{khub::RepoType::Kernel, "kernels-community", "activation"}, false);
    return std::move(*s);
  }();
  static Hub hub{*store, config, std::string(32, 'k'), 8080};
  return hub;
}

/// Serves one request as server.cpp does: GET/HEAD to dispatch_read, the rest to dispatch_write.
inline httplib::Response serve(const std::string& method, const std::string& target,
                               const httplib::Headers& headers, std::string_view body) {
  using namespace khub::localhub;
  httplib::Request req;
  req.method = method;
  req.target = target;
  auto q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string::npos) httplib::detail::parse_query_text(target.substr(q + 1), req.params);
  req.headers = headers;
  req.remote_addr = "127.0.0.1";
  httplib::Response res;
  if (method == "GET" || method == "HEAD") {
    dispatch_read(local_hub(), req, res);
    if (verbose()) std::fprintf(stderr, "%s %s: %d %.200s\n", method.c_str(), target.c_str(), res.status, res.body.c_str());
    return res;
  }
  auto feed = [body](const httplib::ContentReceiver& receiver) {
    std::string_view rest = body;
    while (!rest.empty()) {
      auto chunk = rest.substr(0, 1024);
      rest.remove_prefix(chunk.size());
      if (!receiver(chunk.data(), chunk.size())) return false;
    }
    return true;
  };
  httplib::ContentReader reader(
      [&](httplib::ContentReceiver receiver) { return feed(receiver); },
      [&](httplib::MultipartContentHeader, httplib::ContentReceiver receiver) { return feed(receiver); });
  dispatch_write(local_hub(), req, res, reader);
  if (verbose()) std::fprintf(stderr, "%s %s: %d %.200s\n", method.c_str(), target.c_str(), res.status, res.body.c_str());
  return res;
}

}  // namespace khub_fuzz
