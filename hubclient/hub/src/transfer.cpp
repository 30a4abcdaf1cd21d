// Resolve HEAD (metadata from the last Hub-host response) and GET with resume and verification
// (docs/protocol.md, Downloads).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include "client_impl.h"
#include "xet_download.h"
#include "khub/base/hash.h"
#include "khub/base/redact.h"
#include "khub/base/text.h"
#include "khub/base/url.h"
#include "khub/base/write_back.h"

namespace khub::hub {
namespace fs = std::filesystem;

namespace {

std::string normalise_etag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  std::erase(etag, '"');
  return etag;
}

constexpr int kMaxHops = 10;

// A Xet file's HEAD names its Xet hash and the route of its read token: Link rel="xet-auth", else
// X-Xet-Refresh-Route. A route on huggingface.co points at the configured endpoint instead, as in
// huggingface_hub; a relative one is taken against the answering URL.
void read_xet_fields(FileMetadata& m, const http::Response& res, const std::string& url, const std::string& endpoint) {
  m.xet_hash = res.header("x-xet-hash");
  if (m.xet_hash.empty()) return;
  std::string route = http::link_with_rel(res.header("link"), "xet-auth");
  if (route.empty()) route = res.header("x-xet-refresh-route");
  if (route.empty()) return;
  constexpr std::string_view kHub = "https://huggingface.co/";
  if (route.rfind(kHub, 0) == 0) route = endpoint + "/" + route.substr(kHub.size());
  route = join_url(url, route);
  if (is_http_url(route)) m.xet_token_route = std::move(route);
}

Error non_http_redirect(std::string_view method, const std::string& from, const std::string& to) {
  return Error(ErrorCode::Protocol,
               std::string(method) + " " + redact(from) + ": redirect to a non-HTTP URL refused: " + redact(to),
               "the server is not a Hugging Face Hub (proxy or firewall?)");
}

}  // namespace

Expected<FileMetadata> HubClient::file_metadata(const RepoRef& repo, std::string_view revision,
                                                std::string_view path, bool retry) {
  auto& impl = *impl_;
  if (impl.options.offline) return impl.offline_error(std::string(path));
  std::string url = resolve_url(impl.options.endpoint, repo, revision, path);
  const http::ErrorContext ctx = error_context(&repo, revision, path);
  for (int hop = 0; hop <= kMaxHops; ++hop) {
    KHUB_TRY(auto res, impl.send(impl.api_request("HEAD", url), retry ? -1 : 0));
    if (res.is_redirect()) {
      std::string location = res.header("location");
      if (location.empty()) return Error(ErrorCode::Protocol, "redirect without Location from HEAD " + redact(url));
      std::string next = join_url(url, location);
      if (!is_http_url(next)) return non_http_redirect("HEAD", url, next);
      bool relative = !has_scheme(location) && location.rfind("//", 0) != 0;
      if (relative || impl.is_hub_host(next)) {  // same host: follow, keeping the token
        url = next;
        continue;
      }
      // Another host (CDN): this response carries the metadata.
      FileMetadata m;
      m.commit = res.header("x-repo-commit");
      m.etag = normalise_etag(res.header("x-linked-etag").empty() ? res.header("etag") : res.header("x-linked-etag"));
      const auto linked = parse_decimal_u64(res.header("x-linked-size"));
      if (!linked) return Error(ErrorCode::Protocol, "HEAD " + redact(url) + ": redirect without a valid X-Linked-Size");
      m.size = *linked;
      m.location = next;
      read_xet_fields(m, res, url, impl.options.endpoint);
      if (m.commit.empty() || m.etag.empty())
        return Error(ErrorCode::Protocol, "HEAD " + redact(url) + ": no X-Repo-Commit or ETag",
                     "the server is not a Hugging Face Hub (proxy or firewall?)");
      return m;
    }
    if (res.status == 404 && res.header("x-error-code") == "EntryNotFound" && !res.header("x-repo-commit").empty()) {
      FileMetadata m;
      m.exists = false;
      m.commit = res.header("x-repo-commit");
      return m;
    }
    if (!res.ok()) return http::hub_error("HEAD", url, res, ctx);
    FileMetadata m;
    m.commit = res.header("x-repo-commit");
    m.etag = normalise_etag(res.header("x-linked-etag").empty() ? res.header("etag") : res.header("x-linked-etag"));
    std::string size_text = res.header("x-linked-size");
    if (size_text.empty()) size_text = res.header("content-length");
    const auto size = parse_decimal_u64(size_text);
    if (m.commit.empty() || m.etag.empty() || !size)
      return Error(ErrorCode::Protocol, "HEAD " + redact(url) + ": missing X-Repo-Commit, ETag or size",
                   "the server is not a Hugging Face Hub (proxy or firewall?)");
    m.size = *size;
    m.location = url;
    read_xet_fields(m, res, url, impl.options.endpoint);
    return m;
  }
  return Error(ErrorCode::Protocol, "too many redirects resolving " + std::string(path) + " in " + repo.id);
}

namespace {

// How often one file's download may be resumed after `received` bytes: a few times, then four more
// per MiB (a network that drops every 256 KiB still finishes; a server cutting every connection
// after a few bytes does not keep the client busy for hours).
int max_resumes(std::uint64_t received) { return 8 + static_cast<int>(4 * (received >> 20)); }

// The state of one file transfer: an fd, the bytes so far and a running content hash.
struct Sink {
  int fd = -1;
  std::uint64_t have = 0;
  std::uint64_t expected = 0;
  WriteBack write_back;
  std::optional<Hasher> hasher;
  HashAlgorithm algorithm = HashAlgorithm::Sha256;
  bool check_hash = false;
  std::string write_error;

  void reset_hash() {
    if (!check_hash) return;
    hasher.emplace(algorithm);
    if (algorithm == HashAlgorithm::Sha1) {  // git blob header, size known from HEAD
      std::string header = "blob " + std::to_string(expected);
      hasher->update(std::string_view(header.data(), header.size() + 1));
    }
  }
  bool truncate() {
    have = 0;
    write_back.restart_at(0);
    reset_hash();
    return ::ftruncate(fd, 0) == 0 && ::lseek(fd, 0, SEEK_SET) == 0;
  }
  // Takes over the bytes a download of the same blob left (hashing them), so the transfer goes on
  // from there; more bytes than the blob has start it over.
  bool resume_existing() {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return fail_io();
    if (st.st_size == 0) return true;
    if (static_cast<std::uint64_t>(st.st_size) > expected) return truncate() || fail_io();
    std::vector<char> buf(1u << 20);
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail_io();
      if (n == 0) break;
      if (hasher) hasher->update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      have += static_cast<std::uint64_t>(n);
    }
    write_back.restart_at(have);
    return true;
  }
  bool fail_io() {
    write_error = std::strerror(errno);
    return false;
  }
  bool write(std::string_view chunk) {
    const char* p = chunk.data();
    std::size_t left = chunk.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        write_error = std::strerror(errno);
        return false;
      }
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    if (hasher) hasher->update(chunk);
    have += chunk.size();
    write_back.advance(fd, have);
    return true;
  }
};

}  // namespace

Status HubClient::download(const FileMetadata& meta, const fs::path& dest, std::string_view display_path) {
  auto& impl = *impl_;
  if (impl.options.offline) return impl.offline_error(std::string(display_path));
  Sink sink;
  sink.expected = meta.size;
  sink.check_hash = is_hex(meta.etag) && (meta.etag.size() == 64 || meta.etag.size() == 40);
  sink.algorithm = meta.etag.size() == 64 ? HashAlgorithm::Sha256 : HashAlgorithm::Sha1;
  sink.fd = ::open(dest.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (sink.fd < 0) return Error(ErrorCode::Io, "cannot create " + dest.string() + ": " + std::strerror(errno),
                                "check that the cache folder is writable (KERNELS_CACHE / HF_HUB_CACHE)");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{sink.fd};
  sink.reset_hash();
  if (!sink.resume_existing()) {
    std::error_code ec;
    fs::remove(dest, ec);
    return Error(ErrorCode::Io, "cannot read " + dest.string() + ": " + sink.write_error);
  }
  auto* progress = impl.options.progress.get();
  if (progress) progress->on_start(display_path, meta.size);
  // Xet first, as the Python client; the Hub's whole-file URL stays the fallback for a CAS that
  // cannot be reached or answers wrong (the bytes are checked either way).
  if (is_xet_download(meta)) {
    auto xet = download_xet(impl, meta, dest, display_path);
    if (xet) {
      if (progress) progress->on_complete(display_path);
      return {};
    }
    if (xet.error().code == ErrorCode::Cancelled || xet.error().code == ErrorCode::Io) {
      std::error_code ec;
      fs::remove(dest, ec);
      return std::move(xet).error();
    }
    impl.retry_notice()(xet.error().message + "; falling back to the whole-file URL", 1, 1,
                        std::chrono::milliseconds(0));
    sink.have = 0;
    sink.reset_hash();
  }
  auto fail = [&](Error e) -> Status {
    std::error_code ec;
    fs::remove(dest, ec);
    return e;
  };

  int resume_attempts = 0;  // dropped connections in a row without progress
  int resumes = 0;          // all of them: a server that drops after every few bytes makes progress
                            // each time, so their number is bounded by the bytes received
  int status_attempts = 0;  // retryable statuses
  std::string url = meta.location;
  int hops = 0;
  while (true) {
    http::Request req;
    req.url = url;
    req.headers = impl.headers_for(url);
    req.timeout = impl.options.download_timeout;
    if (sink.have > 0) req.headers.emplace_back("Range", "bytes=" + std::to_string(sink.have) + "-");
    const std::uint64_t before = sink.have;
    enum class Abort { None, BadRange, TooLong, Cancelled } abort = Abort::None;
    req.on_start = [&](const http::Response& r) {
      if (sink.have > 0 && r.status == 200) return sink.truncate();  // Range ignored: restart from 0
      if (r.status == 206 && r.header("content-range").rfind("bytes " + std::to_string(sink.have) + "-", 0) != 0) {
        abort = Abort::BadRange;
        return false;
      }
      return true;
    };
    req.on_body = [&](std::string_view chunk) {
      if (sink.have + chunk.size() > meta.size) {
        abort = Abort::TooLong;
        return false;
      }
      if (!sink.write(chunk)) return false;
      if (progress && !progress->on_bytes(display_path, sink.have, meta.size)) {
        abort = Abort::Cancelled;
        return false;
      }
      return true;
    };
    auto res = impl.perform(req);
    if (!sink.write_error.empty())
      return fail(Error(ErrorCode::Io, "cannot write " + dest.string() + ": " + sink.write_error));
    switch (abort) {
      case Abort::TooLong:
        return fail(Error(ErrorCode::Integrity, std::string(display_path) + ": server sent more than the " +
                                                    std::to_string(meta.size) + " bytes HEAD announced"));
      case Abort::Cancelled:
        return fail(Error(ErrorCode::Cancelled, "download of " + std::string(display_path) + " cancelled"));
      case Abort::BadRange:
        if (++resume_attempts > 5 || !sink.truncate())
          return fail(Error(ErrorCode::Protocol, std::string(display_path) + ": server answers ranges incorrectly"));
        continue;
      case Abort::None:
        break;
    }
    if (res && res->is_redirect() && hops < kMaxHops) {  // CDN bridge hops; the token only goes to Hub hosts
      ++hops;
      std::string next = join_url(url, res->header("location"));
      if (!is_http_url(next)) return fail(non_http_redirect("GET", url, next));
      url = std::move(next);
      continue;
    }
    if (res && res->ok()) {
      if (sink.have == meta.size) break;
      // The body ended short without a transport error: resume, then give up.
      if (++resume_attempts <= 5) continue;
      return fail(Error(ErrorCode::Integrity,
                        std::string(display_path) + ": consistency check failed: expected " +
                            std::to_string(meta.size) + " bytes, got " + std::to_string(sink.have),
                        "retry; if it persists the server is serving a truncated file"));
    }
    if (res && http::is_retryable_status(res->status)) {
      const auto& policy = impl.options.retry;
      if (++status_attempts > policy.max_retries) return fail(http::hub_error("GET", url, *res));
      http::pause_before_retry(impl.retry_notice(), "GET " + redact(url) + ": HTTP " + std::to_string(res->status),
                               status_attempts - 1, policy.max_retries,
                               http::retry_wait(policy, status_attempts - 1, &res.value()));
      continue;
    }
    if (res) return fail(http::hub_error("GET", url, *res, error_context(nullptr, {}, display_path)));
    // Transport failure (dropped connection, stall): resume from what we have; the counter resets
    // whenever bytes arrived.
    if (sink.have > before) resume_attempts = 0;
    if (++resume_attempts > 5) return fail(std::move(res).error());
    if (++resumes > max_resumes(sink.have))
      return fail(Error(ErrorCode::Network,
                        std::string(display_path) + ": the connection dropped " + std::to_string(resumes) +
                            " times in " + std::to_string(sink.have) + " bytes",
                        "the server or the network keeps cutting the download; retry later")
                      .note(res.error().message));
    std::this_thread::sleep_for(std::min(impl.options.retry.base, std::chrono::milliseconds(1000)));
  }
  if (::fdatasync(sink.fd) != 0)
    return fail(Error(ErrorCode::Io, "cannot sync " + dest.string() + ": " + std::strerror(errno)));
  if (sink.hasher) {
    std::string got = to_hex(sink.hasher->finish());
    if (got != meta.etag)
      return fail(Error(ErrorCode::Integrity,
                        std::string(display_path) + ": " + (meta.etag.size() == 64 ? "sha256" : "git sha1") + " mismatch",
                        "the download was corrupted or the server is misbehaving; nothing was kept, retry")
                      .note("expected " + meta.etag + " (etag), got " + got));
  }
  if (progress) progress->on_complete(display_path);
  return {};
}

}  // namespace khub::hub
