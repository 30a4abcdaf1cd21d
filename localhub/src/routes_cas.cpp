// The Xet CAS (docs/localhub.md "Xet"): xorb and shard uploads, reconstruction answers and the
// signed fetch URLs they point to. Xorbs are checked (every record decoded, every chunk hashed)
// before they are stored; a shard's files are checked against the stored xorbs and their content
// is written into the blob store under its sha256, so every read path that serves LFS files
// serves them too, and a commit may then name them as LFS files.
#include <charconv>
#include <chrono>
#include <semaphore>

#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"
#include "routes.h"
#include "xet_auth.h"
#include "xet_content.h"

namespace khub::localhub {

using nlohmann::json;

namespace {
// 64 MiB of chunk content, its record headers and a footer a local store may have left on it.
constexpr std::uint64_t kMaxXorbBody = xet::kMaxXorbBytes + (1u << 20);
// hf_xet splits its shards to stay under 64 MiB.
constexpr std::uint64_t kMaxShardBody = (64u << 20) + (1u << 20);
constexpr std::uint64_t kMaxTelemetryBody = 1u << 20;

// Xorb and shard bodies are held in memory while they are checked: at most this many at once in
// the process (8 x 65 MiB), others wait for a slot before their body is read.
std::counting_semaphore<64> g_body_slots(8);

struct BodySlot {
  bool held = false;
  bool acquire() { return held = g_body_slots.try_acquire_for(std::chrono::seconds(60)); }
  ~BodySlot() {
    if (held) g_body_slots.release();
  }
};

// Refuses from the head alone a body announced larger than `limit`; a chunked body is cut at the
// limit by read_body.
bool body_fits(const Req& req, Res& res, std::uint64_t limit) {
  const auto length = req.get_header_value("Content-Length");
  std::uint64_t n = 0;
  if (length.empty()) return true;
  auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
  if (ec == std::errc() && end == length.data() + length.size() && n <= limit) return true;
  send_error(res, 413, "PayloadTooLarge", "request body larger than " + std::to_string(limit) + " bytes");
  return false;
}

// The whole body, or nullopt when the answer (413, 503) was sent instead.
std::optional<std::string> read_bounded_body(const Req& req, Res& res, const Reader& reader, std::uint64_t limit,
                                             BodySlot& slot) {
  if (!body_fits(req, res, limit)) return std::nullopt;
  if (!slot.acquire()) {
    send_error(res, 503, "ServiceUnavailable", "too many Xet uploads at once; retry");
    return std::nullopt;
  }
  // As read_body, with room for the announced length made first: a 64 MiB xorb is not moved and
  // faulted in again each time a growing string doubles.
  std::string body;
  std::uint64_t announced = 0;
  const auto length = req.get_header_value("Content-Length");
  std::from_chars(length.data(), length.data() + length.size(), announced);  // body_fits checked it
  body.reserve(static_cast<std::size_t>(std::min(announced, limit)));
  bool too_large = false;
  const bool ok = reader([&](const char* data, size_t n) {
    if (body.size() + n > limit) return !(too_large = true);
    body.append(data, n);
    return true;
  });
  if (too_large) {
    send_error(res, 413, "PayloadTooLarge", "request body larger than " + std::to_string(limit) + " bytes");
    return std::nullopt;
  }
  if (!ok) {
    send_error(res, 400, "BadRequest", "request body could not be read");
    return std::nullopt;
  }
  return body;
}

// Reads and drops a body of at most `limit` bytes; false when the answer (413, 400) was sent.
bool discard_body(const Req& req, Res& res, const Reader& reader, std::uint64_t limit) {
  if (!body_fits(req, res, limit)) return false;
  std::uint64_t got = 0;
  if (reader([&](const char*, size_t n) { return (got += n) <= limit; })) return true;
  if (got > limit) {
    send_error(res, 413, "PayloadTooLarge", "request body larger than " + std::to_string(limit) + " bytes");
  } else {
    send_error(res, 400, "BadRequest", "request body could not be read");
  }
  return false;
}

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

// "bytes=S-E" or "bytes=S-" (all hf_xet sends); nullopt for anything else.
std::optional<std::pair<std::uint64_t, std::optional<std::uint64_t>>> parse_single_range(std::string_view header) {
  if (!header.starts_with("bytes=")) return std::nullopt;
  header.remove_prefix(6);
  const auto dash = header.find('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  auto number = [](std::string_view t) -> std::optional<std::uint64_t> {
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
    return v;
  };
  const auto first = number(header.substr(0, dash));
  if (!first) return std::nullopt;
  const auto rest = header.substr(dash + 1);
  if (rest.empty()) return std::pair{*first, std::optional<std::uint64_t>()};
  const auto last = number(rest);
  if (!last || *last < *first) return std::nullopt;
  return std::pair{*first, std::optional<std::uint64_t>(*last)};
}

// Writes a checked file's content into the blob store, where its sha256 must come out as the
// shard says (when it says one). Returns the content's sha256.
Expected<std::string> store_content(Hub& hub, const XetFile& file, const std::optional<xet::Hash>& claimed,
                                    XorbCache& xorbs) {
  const std::string expected = claimed && !claimed->is_zero() ? claimed->str() : std::string();
  if (!expected.empty() && hub.store.blobs().contains(expected)) {  // checked when it was registered
    KHUB_TRY(auto known, hub.store.xet_file_for(expected));
    if (known && *known == file.hash) {
      hub.store.blobs().touch(expected);
      return expected;
    }
  }
  KHUB_TRY(auto writer, hub.store.blobs().begin());
  KHUB_CHECK(read_file(hub.store.blobs(), file, xorbs, [&](std::string_view d) { return writer.write(d); }));
  auto info = writer.commit(expected, file.size);
  if (!info && info.error().code == ErrorCode::Integrity) {
    return Error(ErrorCode::InvalidArgument,
                 "file " + file.hash.str() + ": the shard's sha256 is not that of the file's content");
  }
  if (!info) return std::move(info).error();
  return info->sha256;
}
}  // namespace

void post_xorb(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view name) {
  const auto hash = xet::parse_hash(name);
  if (!hash) return send_error(res, 400, "BadRequest", "xorb name must be 64 hex digits");
  if (!require_xet_access(hub, req, res, XetAccess::Write)) return;
  BodySlot slot;
  auto body = read_bounded_body(req, res, reader, kMaxXorbBody, slot);
  if (!body) return;
  auto known = hub.store.touch_xorb(*hash);
  if (!known) return send_error(res, known.error());
  if (*known) return send_json(res, {{"was_inserted", false}});
  auto index = xet::index_xorb(bytes_of(*body));
  if (!index) return send_error(res, 400, "BadRequest", "xorb " + hash->str() + ": " + index.error().message);
  if (index->hash != *hash) {
    return send_error(res, 400, "BadRequest",
                      "xorb body hashes to " + index->hash.str() + ", not to " + hash->str() + " as its URL says");
  }
  // The record bytes only: fetch ranges are offsets into them, and a footer is rebuilt by no one.
  auto blob = hub.store.blobs().put(std::string_view(*body).substr(0, index->records_size));
  if (!blob) return send_error(res, blob.error());
  auto inserted = hub.store.put_xorb(*index, blob->sha256);
  if (!inserted) return send_error(res, inserted.error());
  send_json(res, {{"was_inserted", *inserted}});
}

void post_shard(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  auto repo = require_xet_access(hub, req, res, XetAccess::Write);
  if (!repo) return;
  BodySlot slot;
  auto body = read_bounded_body(req, res, reader, kMaxShardBody, slot);
  if (!body) return;
  auto shard = xet::read_shard(bytes_of(*body), body->size() / 48 + 8);
  if (!shard) return send_error(res, 400, "BadRequest", "invalid shard: " + shard.error().message);
  // Every file is checked before any is stored: a shard is taken whole or not at all.
  XorbCache xorbs(hub.store);
  std::uint64_t chunk_refs = 0;
  std::vector<XetFile> files;
  for (const auto& info : shard->files) {
    auto file = check_shard_file(info, xorbs, chunk_refs);
    if (!file) return send_error(res, 400, "BadRequest", "shard refused: " + file.error().message);
    if (file->size > hub.config.max_object_size) {
      return send_error(res, 400, "BadRequest", "file " + file->hash.str() + " is larger than " +
                                                    std::to_string(hub.config.max_object_size) + " bytes");
    }
    files.push_back(std::move(*file));
  }
  bool synced = false;
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto sha256 = store_content(hub, files[i], shard->files[i].sha256, xorbs);
    if (!sha256) return send_error(res, sha256.error());
    auto fresh = hub.store.put_xet_file(files[i], *sha256);
    if (!fresh) return send_error(res, fresh.error());
    synced |= *fresh;
    // The uploading repo may now commit this content, as after an LFS upload.
    if (auto st = hub.store.grant_object(repo->rowid, *sha256); !st) return send_error(res, st.error());
  }
  send_json(res, {{"result", synced ? 1 : 0}});
}

void get_reconstruction(Hub& hub, const Req& req, Res& res, std::string_view file_id) {
  auto repo = require_xet_access(hub, req, res, XetAccess::Read);
  if (!repo) return;
  const auto hash = xet::parse_hash(file_id);
  if (!hash) return send_error(res, 400, "BadRequest", "file id must be 64 hex digits");
  auto file = hub.store.find_xet_file(*hash);
  if (!file) return send_error(res, file.error());
  auto held = *file ? hub.store.holds_xet_file(*repo, *hash) : Expected<bool>(false);
  if (!held) return send_error(res, held.error());
  if (!*held) return send_error(res, 404, "EntryNotFound", "no file " + hash->str() + " in this repo");
  const auto& f = **file;
  std::uint64_t first = 0, last = f.size == 0 ? 0 : f.size - 1;
  if (const auto header = req.get_header_value("Range"); !header.empty()) {
    const auto range = parse_single_range(header);
    if (!range) return send_error(res, 400, "BadRequest", "Range must be bytes=START-END");
    if (range->first >= f.size) {
      res.set_header("Content-Range", "bytes */" + std::to_string(f.size));
      return send_error(res, 416, "RangeNotSatisfiable", "range starts at or past the end of the file");
    }
    first = range->first;
    last = std::min(range->second.value_or(f.size - 1), f.size - 1);
  }
  xet::Reconstruction plan;
  if (f.size > 0) {
    XorbCache xorbs(hub.store);
    auto planned = plan_reconstruction(f, first, last, xorbs, [&](const xet::Hash& xorb, std::uint64_t a, std::uint64_t b) {
      return xorb_fetch_url(hub, req, xorb, a, b);
    });
    if (!planned) return send_error(res, planned.error());
    plan = std::move(*planned);
  }
  res.status = 200;
  res.set_content(xet::to_json(plan), "application/json");
}

void get_xorb_data(Hub& hub, const Req& req, Res& res, std::string_view name) {
  const auto signed_range = check_fetch_url(hub, req, name);
  if (!signed_range) return send_error(res, 403, "Forbidden", "fetch URL signature is invalid or expired");
  const auto hash = xet::parse_hash(name);
  auto xorb = hash ? hub.store.find_xorb(*hash) : Expected<std::optional<StoredXorb>>(std::nullopt);
  if (!xorb) return send_error(res, xorb.error());
  const auto size = *xorb ? hub.store.blobs().size_of((*xorb)->blob_sha256) : std::nullopt;
  if (!size) return send_error(res, 404, "NotFound", "no xorb " + std::string(name));
  std::uint64_t first = signed_range->first, last = signed_range->last;
  if (last >= *size) return send_error(res, 404, "NotFound", "fetch URL is past the end of its xorb");
  res.set_header("Accept-Ranges", "bytes");
  res.status = 200;
  if (const auto header = req.get_header_value("Range"); !header.empty()) {
    // One range, inside what the URL was signed for.
    const auto range = parse_single_range(header);
    if (!range || range->first < first || range->first > last || range->second.value_or(last) > last) {
      res.set_header("Content-Range", "bytes */" + std::to_string(*size));
      return send_error(res, 416, "RangeNotSatisfiable", "range outside what this fetch URL serves");
    }
    first = range->first;
    last = range->second.value_or(last);
    res.status = 206;
    res.set_header("Content-Range",
                   "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(*size));
  }
  stream_file_range(res, hub.store.blobs().path_of((*xorb)->blob_sha256), first, last - first + 1,
                    "application/octet-stream");
}

void post_cas_fallback(Hub& hub, const Req& req, Res& res, const Reader& reader) {
  // hf_xet tries these first and falls back on 404. The body is read (and dropped) so the answer is
  // not cut off by a connection closed under a client still sending.
  if (!require_xet_access(hub, req, res, XetAccess::Write) || !discard_body(req, res, reader, kMaxShardBody)) return;
  send_error(res, 404, "NotFound", "not served here: upload xorbs to /v1/xorbs and shards to /v1/shards");
}

void post_telemetry(Hub& /*hub*/, const Req& req, Res& res, const Reader& reader) {
  // Best effort on the client's side; nothing is recorded.
  if (!discard_body(req, res, reader, kMaxTelemetryBody)) return;
  send_json(res, json::object());
}

}  // namespace khub::localhub
