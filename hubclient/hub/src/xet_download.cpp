#include "xet_download.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "khub/base/hash.h"
#include "khub/base/parallel.h"
#include "khub/base/redact.h"
#include "khub/base/write_back.h"
#include "khub/xet/connection.h"
#include "khub/xet/hash.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/xorb.h"

namespace khub::hub {
namespace fs = std::filesystem;

namespace {

// One piece of the file: a term of the reconstruction, where its bytes go, and the hashes of its
// chunks once fetched (they make the file's Xet hash).
struct Piece {
  const xet::ReconstructionTerm* term = nullptr;
  std::uint64_t file_offset = 0;
  std::vector<xet::HashedSize> chunks;
  std::size_t index = 0;  // in file order
};

// One range read: a fetch entry and the pieces it serves.
struct Fetch {
  const xet::FetchInfo* info = nullptr;
  std::vector<Piece*> pieces;
};

Error xet_error(ErrorCode code, std::string_view path, const std::string& what) {
  return Error(code, std::string(path) + ": Xet download: " + what);
}

// A token serves every file of its route (one repo and commit) until 30 s before it expires, as in
// hf_xet: a snapshot of many Xet files asks once.
Expected<xet::CasConnection> read_token(HubClient::Impl& impl, const std::string& route) {
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  std::lock_guard<std::mutex> lock(impl.cas_token_mutex);
  if (auto it = impl.cas_tokens.find(route); it != impl.cas_tokens.end() && !it->second.expiring(now))
    return it->second;
  KHUB_TRY(auto res, impl.send(impl.api_request("GET", route)));
  if (!res.ok()) return http::hub_error("GET", route, res);
  KHUB_TRY(auto cas, xet::parse_cas_connection(res.body, res.header("x-xet-cas-url"), res.header("x-xet-access-token"),
                                               res.header("x-xet-token-expiration")));
  impl.cas_tokens[route] = cas;
  return cas;
}

// The CAS gets its own token and never the Hub's, even when it shares the Hub's host.
http::Request cas_request(const HubClient::Impl& impl, const xet::CasConnection& cas, std::string url) {
  http::Request req;
  req.url = std::move(url);
  req.headers = {{"Authorization", "Bearer " + cas.access_token}};
  req.timeout = impl.options.etag_timeout;
  req.total_timeout = 3 * impl.options.etag_timeout;
  return req;
}

Expected<xet::Reconstruction> query_reconstruction(HubClient::Impl& impl, const xet::CasConnection& cas,
                                                   const FileMetadata& meta) {
  auto req = cas_request(impl, cas, cas.cas_url + "/v1/reconstructions/" + meta.xet_hash);
  req.headers.emplace_back("Range", "bytes=0-" + std::to_string(meta.size - 1));
  KHUB_TRY(auto res, impl.send(req));
  if (!res.ok()) return http::hub_error("GET", req.url, res);
  return xet::parse_reconstruction(res.body);
}

Status write_at(int fd, const std::byte* data, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return Error(ErrorCode::Io, std::string("cannot write the download: ") + std::strerror(errno));
    data += w;
    n -= static_cast<std::size_t>(w);
    offset += static_cast<std::uint64_t>(w);
  }
  return {};
}

// The sha256 of the file, taken in file order while range reads still fill later parts: it follows
// each piece's placed prefix (a piece's chunks are written in order) and reads those bytes back from
// the page cache, so what is left to hash when the last byte lands is a part of the file, not all of
// it. A range read that was retried may have rewritten bytes already hashed: download_xet then hashes
// the whole file again. The hashed prefix also goes to the disk early (WriteBack) for the fdatasync.
class OrderedSha256 {
 public:
  OrderedSha256(int fd, const std::vector<Piece>& pieces) : fd_(fd), pieces_(pieces), placed_(pieces.size(), 0) {
    thread_ = std::thread([this] { run(); });
  }
  ~OrderedSha256() { stop(); }
  OrderedSha256(const OrderedSha256&) = delete;
  OrderedSha256& operator=(const OrderedSha256&) = delete;

  // `piece` now holds `prefix` bytes from its start.
  void placed(std::size_t piece, std::uint64_t prefix) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      placed_[piece] = std::max(placed_[piece], prefix);
    }
    wake_.notify_one();
  }

  // After every piece is placed: the digest, hex.
  Expected<std::string> finish() {
    thread_.join();
    if (error_) return *error_;
    return to_hex(sha_.finish());
  }

  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

 private:
  void run() {
    std::vector<std::byte> buffer(std::size_t{1} << 20);
    for (const Piece& piece : pieces_) {
      const std::uint64_t length = piece.term->unpacked_length;
      for (std::uint64_t hashed = 0; hashed < length;) {
        std::uint64_t ready = 0;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          wake_.wait(lock, [&] { return stopping_ || placed_[piece.index] > hashed; });
          if (stopping_) return;
          ready = placed_[piece.index];
        }
        while (hashed < ready) {
          const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), ready - hashed));
          const ssize_t got = ::pread(fd_, buffer.data(), n, static_cast<off_t>(piece.file_offset + hashed));
          if (got < 0 && errno == EINTR) continue;
          if (got <= 0) {
            error_ = Error(ErrorCode::Io, std::string("cannot read back the download: ") +
                                              (got < 0 ? std::strerror(errno) : "the file is shorter"));
            return;
          }
          sha_.update(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got)));
          hashed += static_cast<std::uint64_t>(got);
          write_back_.advance(fd_, piece.file_offset + hashed);  // the file's prefix is complete up to here
        }
      }
    }
  }

  const int fd_;
  const std::vector<Piece>& pieces_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::uint64_t> placed_;  // guarded by mutex_
  bool stopping_ = false;              // guarded by mutex_
  Hasher sha_{HashAlgorithm::Sha256};  // the thread's until finish()
  WriteBack write_back_;               // the thread's
  std::optional<Error> error_;         // the thread's until finish()
  std::thread thread_;
};

// Decodes a range read's records (chunks info.chunk_start.. in order) as they arrive and writes each
// piece's chunks where they belong in the file, hashing every chunk on the way. Only a record cut
// between two parts of the answer is buffered: holding whole ranges (up to 64 MiB each) cost a page
// fault per 4 KiB, the largest cost of a loopback download.
class RecordPlacer {
 public:
  RecordPlacer(const Fetch& fetch, int fd, OrderedSha256& sha)
      : fetch_(fetch), fd_(fd), sha_(sha), index_(fetch.info->chunk_start), placed_(fetch.pieces.size(), 0) {
    for (Piece* p : fetch.pieces) p->chunks.clear();
  }

  // The next bytes of the answer; false once a record is bad or cannot be written (see error()).
  bool feed(std::span<const std::byte> in) {
    while (!in.empty()) {
      if (pending_.empty()) {
        if (in.size() >= kRecordHeaderSize) {
          auto length = xet::record_length(in);
          if (!length) return fail(std::move(length).error());
          if (in.size() >= *length) {
            if (!place(in.first(*length))) return false;
            in = in.subspan(*length);
            continue;
          }
        }
        pending_.assign(in.begin(), in.end());
        return true;
      }
      // Complete the header, then the record, of the one cut by the previous part.
      if (pending_.size() < kRecordHeaderSize) {
        take(in, kRecordHeaderSize);
        if (pending_.size() < kRecordHeaderSize) return true;  // `in` is used up
      }
      auto length = xet::record_length(pending_);
      if (!length) return fail(std::move(length).error());
      take(in, *length);
      if (pending_.size() < *length) return true;
      if (!place(pending_)) return false;
      pending_.clear();
    }
    return true;
  }

  // After the answer's last byte: every chunk of the range arrived and every piece is complete.
  Status finish() {
    if (!error_) flush();
    if (error_) return *error_;
    if (!pending_.empty() || index_ != fetch_.info->chunk_end)
      return Error(ErrorCode::Integrity, "a range read holds fewer chunks than it names");
    for (std::size_t p = 0; p < fetch_.pieces.size(); ++p)
      if (placed_[p] != fetch_.pieces[p]->term->unpacked_length)
        return Error(ErrorCode::Integrity, "a term's chunks hold fewer bytes than its length");
    return {};
  }

  [[nodiscard]] const std::optional<Error>& error() const { return error_; }
  [[nodiscard]] std::uint64_t written() const { return written_; }

 private:
  static constexpr std::size_t kRecordHeaderSize = xet::kRecordHeaderSize;

  // Moves bytes from the front of `in` to pending_ until it holds `want`.
  void take(std::span<const std::byte>& in, std::size_t want) {
    const std::size_t n = std::min(want - pending_.size(), in.size());
    pending_.insert(pending_.end(), in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n));
    in = in.subspan(n);
  }

  bool fail(Error e) {
    error_ = std::move(e);
    return false;
  }

  bool place(std::span<const std::byte> record) {
    if (index_ >= fetch_.info->chunk_end)
      return fail(Error(ErrorCode::Integrity, "a range read holds more chunks than it names"));
    chunk_.clear();
    if (auto used = xet::decode_record(record, chunk_); !used) return fail(std::move(used).error());
    std::optional<xet::Hash> hash;
    for (std::size_t p = 0; p < fetch_.pieces.size(); ++p) {
      Piece& piece = *fetch_.pieces[p];
      if (index_ < piece.term->chunk_start || index_ >= piece.term->chunk_end) continue;
      if (placed_[p] + chunk_.size() > piece.term->unpacked_length)
        return fail(Error(ErrorCode::Integrity, "a term's chunks hold more bytes than its length"));
      if (!hash) hash = xet::chunk_hash(chunk_);
      piece.chunks.push_back({*hash, chunk_.size()});
      const std::uint64_t at = piece.file_offset + placed_[p];
      if (!out_.empty() && (out_piece_ != p || out_offset_ + out_.size() != at) && !flush()) return false;
      if (out_.empty()) out_offset_ = at, out_piece_ = p;
      out_.insert(out_.end(), chunk_.begin(), chunk_.end());
      placed_[p] += chunk_.size();
      written_ += chunk_.size();
      if (out_.size() >= kWriteBytes && !flush()) return false;
    }
    ++index_;
    return true;
  }

  // Writes the bytes waiting in out_ (the tail of one piece) and tells the hasher.
  bool flush() {
    if (out_.empty()) return true;
    if (auto st = write_at(fd_, out_.data(), out_.size(), out_offset_); !st) return fail(std::move(st).error());
    out_.clear();
    sha_.placed(fetch_.pieces[out_piece_]->index, placed_[out_piece_]);
    return true;
  }

  const Fetch& fetch_;
  int fd_;
  OrderedSha256& sha_;
  std::uint32_t index_;
  std::vector<std::uint64_t> placed_;
  std::vector<std::byte> pending_, chunk_;
  // Decoded bytes wait here until 1 MiB or a jump elsewhere in the file: one pwrite per MiB, not per
  // chunk (parallel range reads writing one file contend for its inode's lock).
  static constexpr std::size_t kWriteBytes = std::size_t{1} << 20;
  std::vector<std::byte> out_;
  std::uint64_t out_offset_ = 0;
  std::size_t out_piece_ = 0;
  std::uint64_t written_ = 0;
  std::optional<Error> error_;
};

// GET of a fetch URL (self-authorising: no Authorization) for exactly its byte range, placed as it
// arrives, with the client's retry schedule for dropped connections and retryable statuses (a retry
// reads and places the whole range again). Returns the bytes written.
Expected<std::uint64_t> fetch_and_place(HubClient::Impl& impl, const Fetch& fetch, int fd, OrderedSha256& sha,
                                        std::atomic<bool>& retried) {
  const xet::FetchInfo& info = *fetch.info;
  const std::uint64_t length = info.byte_end - info.byte_start + 1;
  if (length > 2 * xet::kMaxXorbBytes) return Error(ErrorCode::Protocol, "a fetch range larger than any xorb");
  const auto& policy = impl.options.retry;
  for (int attempt = 0;; ++attempt) {
    http::Request req;
    req.url = info.url;
    req.timeout = impl.options.download_timeout;
    req.headers = {{"Range", "bytes=" + std::to_string(info.byte_start) + "-" + std::to_string(info.byte_end)}};
    if (attempt > 0) retried = true;
    RecordPlacer placer(fetch, fd, sha);
    std::uint64_t received = 0;
    bool too_long = false;
    req.on_body = [&](std::string_view part) {
      if (received + part.size() > length) return !(too_long = true);
      received += part.size();
      return placer.feed(std::as_bytes(std::span(part.data(), part.size())));
    };
    auto res = impl.perform(req);
    if (too_long) return Error(ErrorCode::Protocol, "a fetch URL sent more than the byte range asked for");
    if (placer.error()) return *placer.error();
    if (res && res->ok()) {
      if (received == length) {
        KHUB_CHECK(placer.finish());
        return placer.written();
      }
      if (res->status == 200) return Error(ErrorCode::Protocol, "a fetch URL ignored the byte range");
    } else if (res && !http::is_retryable_status(res->status)) {
      return http::hub_error("GET", info.url, *res);
    }
    if (attempt >= policy.max_retries) {
      if (!res) return std::move(res).error();
      if (!res->ok()) return http::hub_error("GET", info.url, *res);
      return Error(ErrorCode::Network, "a fetch URL's answer ended early, " + std::to_string(attempt + 1) + " times");
    }
    http::pause_before_retry(impl.retry_notice(), "GET " + redact(info.url), attempt, policy.max_retries,
                             http::retry_wait(policy, attempt, res ? &res.value() : nullptr));
  }
}

// Splits the reconstruction into pieces at their file offsets and the range reads that serve them.
// Requires the whole file: terms summing to its size from offset 0.
Expected<std::vector<Fetch>> plan_fetches(const xet::Reconstruction& r, std::vector<Piece>& pieces,
                                          std::uint64_t size) {
  if (r.offset_into_first_range != 0) return Error(ErrorCode::Protocol, "the answer does not start at byte 0");
  std::uint64_t offset = 0;
  pieces.reserve(r.terms.size());
  for (const auto& t : r.terms) {
    pieces.push_back({&t, offset, {}, pieces.size()});
    offset += t.unpacked_length;
  }
  if (offset != size)
    return Error(ErrorCode::Integrity, "the terms add up to " + std::to_string(offset) + " bytes, the file has " +
                                           std::to_string(size));
  std::vector<Fetch> fetches;
  std::map<const xet::FetchInfo*, std::size_t> index;
  for (auto& piece : pieces) {
    const auto& entries = r.fetch_info.at(piece.term->xorb);  // parse_reconstruction checked coverage
    const xet::FetchInfo* chosen = nullptr;
    for (const auto& e : entries)
      if (e.chunk_start <= piece.term->chunk_start && piece.term->chunk_end <= e.chunk_end) {
        chosen = &e;
        break;
      }
    auto [it, added] = index.emplace(chosen, fetches.size());
    if (added) fetches.push_back({chosen, {}});
    fetches[it->second].pieces.push_back(&piece);
  }
  return fetches;
}

}  // namespace

bool is_xet_download(const FileMetadata& meta) {
  return !meta.xet_hash.empty() && !meta.xet_token_route.empty() && meta.size > 0 && meta.etag.size() == 64 &&
         xet::parse_hash(meta.xet_hash).has_value();
}

Status download_xet(HubClient::Impl& impl, const FileMetadata& meta, const fs::path& dest,
                    std::string_view display_path) {
  const int fd = ::open(dest.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Error(ErrorCode::Io, "cannot create " + dest.string() + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  auto fail = [&](Error e) -> Status {
    if (::ftruncate(fd, 0) != 0) e.note("could not empty " + dest.string());
    return e;
  };

  auto cas = read_token(impl, meta.xet_token_route);
  if (!cas) return fail(std::move(cas).error());
  auto answer = query_reconstruction(impl, *cas, meta);
  if (!answer) return fail(std::move(answer).error());
  std::vector<Piece> pieces;
  auto fetches = plan_fetches(*answer, pieces, meta.size);
  if (!fetches) return fail(xet_error(fetches.error().code, display_path, fetches.error().message));

  OrderedSha256 sha(fd, pieces);
  std::atomic<bool> retried{false};
  std::mutex mutex;  // guards `done` and the progress sink
  std::uint64_t done = 0;
  auto* progress = impl.options.progress.get();
  auto fetched = run_parallel(
      fetches->size(), static_cast<std::size_t>(std::max(1, impl.options.max_parallel_downloads)),
      [&](std::size_t i) -> Status {
        const Fetch& fetch = (*fetches)[i];
        KHUB_TRY(const std::uint64_t written, fetch_and_place(impl, fetch, fd, sha, retried));
        std::lock_guard<std::mutex> lock(mutex);
        done += written;
        if (progress && !progress->on_bytes(display_path, done, meta.size))
          return Error(ErrorCode::Cancelled, "download of " + std::string(display_path) + " cancelled");
        return {};
      });
  if (!fetched) {
    sha.stop();
    if (fetched.error().code == ErrorCode::Cancelled) return fail(std::move(fetched).error());
    return fail(xet_error(fetched.error().code, display_path, fetched.error().message));
  }

  // The chunks' hashes, in file order, must make the file's Xet hash: every byte is checked against
  // the name the Hub gave, before the sha256 the cache is keyed by.
  std::vector<xet::HashedSize> leaves;
  for (const auto& p : pieces) leaves.insert(leaves.end(), p.chunks.begin(), p.chunks.end());
  if (const auto got = xet::file_hash(leaves).str(); got != meta.xet_hash) {
    sha.stop();
    return fail(Error(ErrorCode::Integrity, std::string(display_path) + ": Xet hash mismatch",
                      "the download was corrupted or the server is misbehaving; nothing was kept, retry")
                    .note("expected " + meta.xet_hash + ", got " + got));
  }
  auto digest = sha.finish();
  if (digest && retried) {  // bytes hashed before a retry rewrote them: hash what the file holds now
    auto whole = hash_file(dest, HashAlgorithm::Sha256);
    digest = whole ? Expected<std::string>(to_hex(*whole)) : Expected<std::string>(std::move(whole).error());
  }
  if (!digest) return fail(std::move(digest).error());
  if (::fdatasync(fd) != 0) return fail(Error(ErrorCode::Io, "cannot sync " + dest.string() + ": " + std::strerror(errno)));
  if (const auto& got = *digest; got != meta.etag)
    return fail(Error(ErrorCode::Integrity, std::string(display_path) + ": sha256 mismatch",
                      "the download was corrupted or the server is misbehaving; nothing was kept, retry")
                    .note("expected " + meta.etag + " (etag), got " + got));
  return {};
}

}  // namespace khub::hub
