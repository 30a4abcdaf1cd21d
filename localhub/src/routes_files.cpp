// Downloads: resolve (Hub headers, LFS redirect, Xet headers) and the signed blob URLs LFS redirects point to.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <memory>

#include "routes.h"
#include "tree_hash.h"

namespace khub::localhub {

namespace {
std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct ByteRange {
  std::uint64_t offset = 0, length = 0;
};

// Parses a single "bytes=a-b" / "bytes=a-" / "bytes=-k". nullopt = serve everything (no or
// multiple ranges); a zero-length range with offset == size marks "unsatisfiable".
std::optional<ByteRange> parse_range(const std::string& header, std::uint64_t size, bool& unsatisfiable) {
  unsatisfiable = false;
  if (!header.starts_with("bytes=") || header.find(',') != std::string::npos) return std::nullopt;
  auto spec = header.substr(6);
  auto dash = spec.find('-');
  if (dash == std::string::npos) return std::nullopt;
  auto a = spec.substr(0, dash), b = spec.substr(dash + 1);
  char* end = nullptr;
  if (a.empty()) {
    auto k = std::strtoull(b.c_str(), &end, 10);
    if (b.empty() || *end) return std::nullopt;
    if (k == 0 || size == 0) {
      unsatisfiable = true;
      return std::nullopt;
    }
    k = std::min<std::uint64_t>(k, size);
    return ByteRange{size - k, k};
  }
  auto first = std::strtoull(a.c_str(), &end, 10);
  if (*end) return std::nullopt;
  std::uint64_t last = size == 0 ? 0 : size - 1;
  if (!b.empty()) {
    last = std::strtoull(b.c_str(), &end, 10);
    if (*end || last < first) return std::nullopt;
    last = std::min<std::uint64_t>(last, size - 1);
  }
  if (first >= size) {
    unsatisfiable = true;
    return std::nullopt;
  }
  return ByteRange{first, last - first + 1};
}

// Streams a blob file (or the requested byte range of it) without loading it into memory.
void serve_file(const Req& req, Res& res, const std::filesystem::path& file, std::uint64_t size,
                const std::string& content_type) {
  res.set_header("Accept-Ranges", "bytes");
  bool unsatisfiable = false;
  auto range = parse_range(req.get_header_value("Range"), size, unsatisfiable);
  if (unsatisfiable) {
    res.set_header("Content-Range", "bytes */" + std::to_string(size));
    return send_error(res, 416, "RangeNotSatisfiable", "requested range not satisfiable");
  }
  ByteRange r = range.value_or(ByteRange{0, size});
  res.status = range ? 206 : 200;
  if (range) {
    res.set_header("Content-Range", "bytes " + std::to_string(r.offset) + "-" + std::to_string(r.offset + r.length - 1) +
                                        "/" + std::to_string(size));
  }
  stream_file_range(res, file, r.offset, r.length, content_type);
}

std::string etag_quote(std::string_view s) { return "\"" + std::string(s) + "\""; }
}  // namespace

void stream_file_range(Res& res, const std::filesystem::path& file, std::uint64_t offset, std::uint64_t length,
                       const std::string& content_type) {
  if (length == 0) {
    res.set_content("", content_type);
    return;
  }
  auto fd = std::make_shared<int>(-1);
  std::string path = file.string();
  res.set_content_provider(
      length, content_type,
      [fd, path, base = offset](size_t at, size_t want_total, httplib::DataSink& sink) {
        if (*fd < 0) *fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (*fd < 0) return false;
        char buf[1 << 16];
        size_t want = std::min(want_total, sizeof buf);
        ssize_t n = ::pread(*fd, buf, want, static_cast<off_t>(base + at));
        if (n <= 0) return false;
        return sink.write(buf, static_cast<size_t>(n));
      },
      [fd](bool) {
        if (*fd >= 0) ::close(*fd);
      });
}

void get_resolve(Hub& hub, const Req& req, Res& res, const RepoKey& key, std::string_view rev, std::string_view path) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo_following_moves(hub, who, key, req, res);
  if (!repo || !check_gate(hub, who, *repo, res)) return;
  auto commit = hub.store.resolve_revision(*repo, rev);
  if (!commit) return send_error(res, commit.error());
  res.set_header("X-Repo-Commit", *commit);
  if (auto why = check_repo_path(path); !why.empty()) {
    return send_error(res, 400, "BadRequest", "invalid path '" + std::string(path) + "': " + why);
  }
  auto file = hub.store.find_file(*repo, *commit, path);
  if (!file) return send_error(res, file.error());
  if (!*file) return send_error(res, 404, "EntryNotFound", "Entry not found");
  const FileEntry& f = **file;
  std::string etag = f.lfs ? f.sha256 : f.git_oid;
  if (auto inm = req.get_header_value("If-None-Match"); !inm.empty() && (inm == etag_quote(etag) || inm == etag)) {
    res.set_header("ETag", etag_quote(etag));
    res.status = 304;
    return;
  }
  if (!f.lfs && hub.config.resolve_cache_redirects && !repo->is_private && repo->gated.empty() && rev != *commit) {
    // The Hub sends public regular files asked by branch through a same-host cache URL.
    std::string location = "/api/resolve-cache/" + std::string(api_segment(key.type)) + "/" + key.id() + "/" + *commit +
                           "/" + url_encode(path, true) + "?etag=%22" + f.git_oid + "%22";
    res.set_header("Location", location);
    res.status = 307;
    res.set_content("Temporary Redirect. Redirecting to " + location, "text/plain");
    return;
  }
  if (!f.lfs) {
    res.set_header("ETag", etag_quote(f.git_oid));
    return serve_file(req, res, hub.store.blobs().path_of(f.sha256), f.size, "application/octet-stream");
  }
  if (!f.xet_hash.empty()) {
    // A Xet-backed file is answered here, not redirected: clients follow a redirect to the same
    // host and would lose these headers. hf_xet reads the file hash and where to get a read token;
    // other clients GET the bytes as from any LFS file.
    const std::string base = base_url(req, hub.port);
    res.set_header("X-Xet-Hash", f.xet_hash);
    res.set_header("Link", "<" + base + "/api/" + std::string(api_segment(repo->key.type)) + "/" + repo->key.id() +
                               "/xet-read-token/" + *commit + ">; rel=\"xet-auth\", <" + base + "/v1/reconstructions/" +
                               f.xet_hash + ">; rel=\"xet-reconstruction-info\"");
    res.set_header("ETag", etag_quote(f.git_oid));
    res.set_header("X-Linked-Etag", etag_quote(f.sha256));
    res.set_header("X-Linked-Size", std::to_string(f.size));
    return serve_file(req, res, hub.store.blobs().path_of(f.sha256), f.size, "application/octet-stream");
  }
  auto exp = std::to_string(now_seconds() + 24 * 3600);
  std::string location = blob_base(hub, req) + "/lfs-blob/" + f.sha256 + "?commit=" + *commit + "&exp=" + exp +
                         "&sig=" + hub.sign("blob:" + f.sha256 + ":" + *commit + ":" + exp);
  res.set_header("ETag", etag_quote(f.git_oid));
  res.set_header("X-Linked-Etag", etag_quote(f.sha256));
  res.set_header("X-Linked-Size", std::to_string(f.size));
  res.set_header("Location", location);
  res.status = 302;
  res.set_content("Found. Redirecting to " + location, "text/plain");
}

void get_lfs_blob(Hub& hub, const Req& req, Res& res, std::string_view sha256) {
  auto commit = req.get_param_value("commit");
  auto exp = req.get_param_value("exp");
  auto sig = req.get_param_value("sig");
  if (!hub.signed_by_us(sig, "blob:" + std::string(sha256) + ":" + commit + ":" + exp) ||
      std::strtoll(exp.c_str(), nullptr, 10) < now_seconds()) {
    return send_error(res, 403, "Forbidden", "blob URL signature is invalid or expired");
  }
  auto size = hub.store.blobs().size_of(sha256);
  if (!size) return send_error(res, 404, "EntryNotFound", "Entry not found");
  res.set_header("X-Repo-Commit", commit);
  res.set_header("ETag", etag_quote(sha256));
  serve_file(req, res, hub.store.blobs().path_of(sha256), *size, "application/octet-stream");
}

}  // namespace khub::localhub
