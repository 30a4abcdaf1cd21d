#pragma once
// What a Xet client does, built from khub::xet for the server's tests: chunk files, pack the chunks
// into xorbs, describe the files in a shard; and the other way, rebuild bytes from a
// reconstruction answer by fetching its URLs.
#include <httplib.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "khub/base/hash.h"
#include "khub/xet/chunker.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"

namespace khub::localhub::testing {

struct BuiltXorb {
  xet::Hash hash;
  std::string records;
};

struct XetUpload {
  std::vector<BuiltXorb> xorbs;
  xet::Shard shard;                      // files in the order given
  std::vector<std::string> sha256;       // per file, hex
  std::vector<xet::Hash> file_hashes;    // per file
  [[nodiscard]] std::string shard_body() const { return xet::write_shard(shard); }
};

/// Chunks `files`, packs new chunks into xorbs of at most `chunks_per_xorb` chunks (so a file spans
/// several xorbs and terms) and writes a shard with verification hashes and sha256s, as hf_xet does.
inline XetUpload build_xet_upload(const std::vector<std::string>& files, std::size_t chunks_per_xorb = xet::kMaxXorbChunks,
                                  xet::CompressionPolicy policy = xet::CompressionPolicy::Auto) {
  struct PendingTerm {
    std::size_t xorb = 0;
    std::uint32_t start = 0, end = 0, bytes = 0;
    std::vector<xet::Hash> hashes;
  };
  XetUpload up;
  xet::XorbWriter writer(policy);
  auto flush = [&] {
    if (writer.empty()) return;
    xet::XorbInfo info{writer.hash(), {}, static_cast<std::uint32_t>(writer.unpacked_size()), 0};
    std::uint32_t at = 0;
    for (const auto& c : writer.chunks()) {
      info.chunks.push_back({c.hash, at, static_cast<std::uint32_t>(c.size), 0});
      at += static_cast<std::uint32_t>(c.size);
    }
    up.shard.xorbs.push_back(info);
    const auto& r = writer.records();
    up.xorbs.push_back({writer.hash(), std::string(reinterpret_cast<const char*>(r.data()), r.size())});
    writer = xet::XorbWriter(policy);
  };
  std::vector<std::vector<PendingTerm>> pending(files.size());
  for (std::size_t f = 0; f < files.size(); ++f) {
    const auto bytes = std::as_bytes(std::span(files[f].data(), files[f].size()));
    std::vector<xet::HashedSize> leaves;
    std::size_t offset = 0;
    for (std::size_t len : xet::chunk_lengths(bytes)) {
      const auto chunk = bytes.subspan(offset, len);
      offset += len;
      const auto hash = xet::chunk_hash(chunk);
      if (!writer.fits(len) || writer.chunks().size() >= chunks_per_xorb) flush();
      const auto index = static_cast<std::uint32_t>(writer.chunks().size());
      writer.add(chunk, hash);
      leaves.push_back({hash, len});
      auto& terms = pending[f];
      if (terms.empty() || terms.back().xorb != up.xorbs.size() || terms.back().end != index)
        terms.push_back({up.xorbs.size(), index, index, 0, {}});
      terms.back().end = index + 1;
      terms.back().bytes += static_cast<std::uint32_t>(len);
      terms.back().hashes.push_back(hash);
    }
    up.file_hashes.push_back(xet::file_hash(leaves));
    up.sha256.push_back(sha256_hex(files[f]));
  }
  flush();
  for (std::size_t f = 0; f < files.size(); ++f) {
    xet::FileInfo info;
    info.file_hash = up.file_hashes[f];
    info.has_verification = true;
    info.sha256 = xet::hash_from_sha256_hex(up.sha256[f]);
    for (const auto& t : pending[f])
      info.terms.push_back({up.xorbs[t.xorb].hash, t.start, t.end, t.bytes, xet::verification_hash(t.hashes)});
    up.shard.files.push_back(std::move(info));
  }
  return up;
}

/// The path and query of an absolute URL ("http://host:port/p?q" → "/p?q").
inline std::string path_of(const std::string& url) {
  const auto slash = url.find('/', url.find("//") + 2);
  return slash == std::string::npos ? "/" : url.substr(slash);
}

struct Rebuilt {
  int status = 0;       // of the reconstruction query
  std::string bytes;    // the content asked for
  std::string error;    // what went wrong, when something did
};

/// Asks the server how to rebuild `file_id` (bytes [first, last] when given), fetches every URL of
/// the answer with its byte range and no Authorization, decodes the records and cuts out the range.
inline Rebuilt rebuild_xet_file(httplib::Client& client, const std::string& token, const std::string& file_id,
                                std::optional<std::pair<std::uint64_t, std::uint64_t>> range = std::nullopt) {
  Rebuilt out;
  httplib::Headers headers{{"Authorization", "Bearer " + token}};
  if (range) headers.emplace("Range", "bytes=" + std::to_string(range->first) + "-" + std::to_string(range->second));
  auto r = client.Get("/v1/reconstructions/" + file_id, headers);
  if (!r) return out.error = "no answer", out;
  out.status = r->status;
  if (r->status != 200) return out.error = r->body, out;
  auto plan = xet::parse_reconstruction(r->body);
  if (!plan) return out.error = plan.error().message, out;
  std::string content;
  for (const auto& term : plan->terms) {
    const auto& entries = plan->fetch_info.at(term.xorb);
    auto fetch = std::find_if(entries.begin(), entries.end(), [&](const xet::FetchInfo& f) {
      return f.chunk_start <= term.chunk_start && term.chunk_end <= f.chunk_end;
    });
    if (fetch == entries.end()) return out.error = "no fetch entry covers a term", out;
    auto got = client.Get(path_of(fetch->url), {{"Range", "bytes=" + std::to_string(fetch->byte_start) + "-" +
                                                              std::to_string(fetch->byte_end)}});
    if (!got || got->status != 206) return out.error = "fetch answered " + std::to_string(got ? got->status : 0), out;
    auto records = std::as_bytes(std::span(got->body.data(), got->body.size()));
    std::vector<std::byte> chunk;
    std::string term_bytes;
    for (std::uint32_t c = fetch->chunk_start; c < term.chunk_end; ++c) {
      chunk.clear();
      auto used = xet::decode_record(records, chunk);
      if (!used) return out.error = used.error().message, out;
      records = records.subspan(*used);
      if (c >= term.chunk_start) term_bytes.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    }
    if (term_bytes.size() != term.unpacked_length) return out.error = "term size differs from unpacked_length", out;
    content += term_bytes;
  }
  content.erase(0, plan->offset_into_first_range);
  if (range) content.resize(std::min<std::uint64_t>(content.size(), range->second - range->first + 1));
  out.bytes = std::move(content);
  return out;
}

}  // namespace khub::localhub::testing
