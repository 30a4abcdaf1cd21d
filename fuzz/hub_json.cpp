// The Hub's answers as the hub client reads them, through the real HubClient code: revision info
// (`sha`), tree listings with Link pagination, refs, organisation overview, HEAD on a resolve URL
// (X-Repo-Commit, ETag, Location, redirects) and the file download that follows it (Range and
// Content-Range on resumes, length and hash checks). libcurl is replaced by a transport that
// answers from the fuzz input: this target defines khub::http::make_curl_transport, so the
// linker never takes curl_transport.o from libkhub_http.a.
//
// Input: the first line names the call (revision, tree, tree-recursive, refs, org, file); then the
// answers in order, separated by a line "===". An answer: a status line ("200"), "name: value"
// header lines, an empty line, the body. When the answers run out the transport fails (Network).
#include <deque>
#include <memory>
#include <string>

#include "fuzz_util.h"
#include "khub/base/text.h"
#include "khub/http/transport.h"
#include "khub/hub/hub_client.h"

namespace {
using namespace khub;

std::deque<http::Response> g_answers;

class FakeTransport final : public http::Transport {
 public:
  Expected<http::Response> perform(const http::Request& request) override {
    if (g_answers.empty()) return Error(ErrorCode::Network, request.method + " " + request.url + ": connection reset");
    http::Response res = std::move(g_answers.front());
    g_answers.pop_front();
    res.url = request.url;
    if (request.method == "HEAD") res.body.clear();
    if (request.on_body && res.ok() && request.method != "HEAD") {  // streamed as curl_transport does
      if (request.on_start && !request.on_start(res)) return Error(ErrorCode::Cancelled, "aborted");
      std::string_view body = res.body;
      while (!body.empty()) {
        auto chunk = body.substr(0, 7);
        body.remove_prefix(chunk.size());
        if (!request.on_body(chunk)) return Error(ErrorCode::Cancelled, "aborted");
      }
      res.body.clear();
      return res;
    }
    if (res.body.size() > request.max_body) {
      if (!res.ok()) {
        res.body.resize(request.max_body);
      } else {
        return Error(ErrorCode::Protocol, "answer longer than max_body");
      }
    }
    return res;
  }
};

http::Response parse_answer(std::string_view in) {
  http::Response res;
  res.status = khub_fuzz::take_status(in);
  khub_fuzz::take_headers(in, [&res](std::string_view name, std::string_view value) {
    res.headers[khub::ascii_lower(name)] = std::string(value);
  });
  res.body = std::string(in);
  return res;
}
}  // namespace

namespace khub::http {
std::unique_ptr<Transport> make_curl_transport(TransportOptions) { return std::make_unique<FakeTransport>(); }
}  // namespace khub::http

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = khub_fuzz::text(data, size);
  auto call = khub_fuzz::take_line(in);
  g_answers.clear();
  while (true) {
    auto sep = in.find("\n===\n");
    g_answers.push_back(parse_answer(in.substr(0, sep)));
    if (sep == std::string_view::npos || g_answers.size() >= 16) break;
    in.remove_prefix(sep + 5);
  }

  hub::ClientOptions options;
  options.endpoint = "https://hub.test";
  options.token = "hf_fuzz";
  options.cache_dir = khub_fuzz::scratch() / "cache";
  options.retry = http::RetryPolicy{.max_retries = 2, .base = std::chrono::milliseconds(0),
                                    .max_wait = std::chrono::milliseconds(0)};
  options.telemetry = false;
  hub::HubClient client(options);
  const hub::RepoRef repo{RepoType::Kernel, "kernels-community/activation"};

  auto report = [](const char* what, const auto& result) {
    if (khub_fuzz::verbose()) std::fprintf(stderr, "%s: %s\n", what, result ? "ok" : result.error().message.c_str());
  };
  if (call == "revision") {
    report("revision", client.revision_commit(repo, "main"));
  } else if (call == "tree" || call == "tree-recursive") {
    report("tree", client.list_tree(repo, "v1", call == "tree" ? "build" : "", call == "tree-recursive"));
  } else if (call == "refs") {
    report("refs", client.list_refs(repo));
  } else if (call == "org") {
    report("org", client.is_trusted_publisher("kernels-community"));
  } else if (call == "file") {
    auto meta = client.file_metadata(repo, "main", "build/torch-cpu/metadata.json");
    report("head", meta);
    if (meta && meta->exists && meta->size <= (1u << 20)) {
      auto dest = khub_fuzz::scratch() / "download.incomplete";
      report("download", client.download(*meta, dest, "metadata.json"));
      std::error_code ec;
      std::filesystem::remove(dest, ec);
    }
  }
  return 0;
}
