#include "xet_content.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace khub::localhub {

namespace {
Error bad(const std::string& why) { return Error(ErrorCode::InvalidArgument, why); }

// Closes a file descriptor on every way out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Status pread_all(int fd, char* out, std::size_t n, std::uint64_t offset) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return Error(ErrorCode::Io, "xorb blob is shorter than its chunk table says");
    out += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
  return {};
}
}  // namespace

Expected<const StoredXorb*> XorbCache::get(const xet::Hash& xorb) {
  auto it = seen_.find(xorb);
  if (it == seen_.end()) {
    KHUB_TRY(auto found, store_.find_xorb(xorb));
    const std::size_t chunks = found ? found->chunks.size() : 0;
    if (chunks_ + chunks > kMaxCachedChunks) {
      seen_.clear();
      chunks_ = 0;
    }
    chunks_ += chunks;
    it = seen_.emplace(xorb, std::move(found)).first;
  }
  return it->second ? &*it->second : nullptr;
}

Status read_chunks(const BlobStore& blobs, const StoredXorb& xorb, std::uint32_t start, std::uint32_t end,
                   const ByteSink& sink) {
  if (start >= end || end > xorb.chunks.size()) return Error(ErrorCode::Io, "chunk range outside its xorb");
  Fd file{::open(blobs.path_of(xorb.blob_sha256).c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return Error(ErrorCode::Io, "xorb blob " + xorb.blob_sha256 + " is missing: " + std::strerror(errno));
  std::vector<char> record;
  std::vector<std::byte> content;
  for (std::uint32_t i = start; i < end; ++i) {
    const auto& c = xorb.chunks[i];
    record.resize(c.record_end - c.record_start);
    KHUB_CHECK(pread_all(file.fd, record.data(), record.size(), c.record_start));
    content.clear();
    auto used = xet::decode_record(std::as_bytes(std::span(record)), content);
    if (!used || *used != record.size() || content.size() != c.unpacked_size)
      return Error(ErrorCode::Io, "xorb blob " + xorb.blob_sha256 + " does not hold the chunks its table says");
    KHUB_CHECK(sink(std::string_view(reinterpret_cast<const char*>(content.data()), content.size())));
  }
  return {};
}

Status read_file(const BlobStore& blobs, const XetFile& file, XorbCache& xorbs, const ByteSink& sink) {
  for (const auto& t : file.terms) {
    KHUB_TRY(const StoredXorb* xorb, xorbs.get(t.xorb));
    if (!xorb) return Error(ErrorCode::Io, "xorb " + t.xorb.str() + " of Xet file " + file.hash.str() + " is missing");
    KHUB_CHECK(read_chunks(blobs, *xorb, t.chunk_start, t.chunk_end, sink));
  }
  return {};
}

Expected<XetFile> check_shard_file(const xet::FileInfo& info, XorbCache& xorbs, std::uint64_t& chunk_refs) {
  const std::string name = info.file_hash.str();
  XetFile file{info.file_hash, 0, {}};
  std::vector<xet::HashedSize> leaves;
  std::vector<xet::Hash> term_hashes;
  for (std::size_t i = 0; i < info.terms.size(); ++i) {
    const auto& t = info.terms[i];
    const std::string where = "term " + std::to_string(i) + " of file " + name;
    KHUB_TRY(const StoredXorb* xorb, xorbs.get(t.xorb));
    if (!xorb) return bad(where + " names xorb " + t.xorb.str() + ", which was never uploaded");
    if (t.chunk_start >= t.chunk_end || t.chunk_end > xorb->chunks.size()) {
      return bad(where + " asks for chunks [" + std::to_string(t.chunk_start) + ", " + std::to_string(t.chunk_end) +
                 ") of xorb " + t.xorb.str() + ", which has " + std::to_string(xorb->chunks.size()));
    }
    chunk_refs += t.chunk_end - t.chunk_start;
    if (chunk_refs > kMaxShardChunkRefs)
      return bad("shard refers to more than " + std::to_string(kMaxShardChunkRefs) + " chunks; split it");
    std::uint64_t bytes = 0;
    term_hashes.clear();
    for (std::uint32_t c = t.chunk_start; c < t.chunk_end; ++c) {
      const auto& chunk = xorb->chunks[c];
      bytes += chunk.unpacked_size;
      term_hashes.push_back(chunk.hash);
      leaves.push_back({chunk.hash, chunk.unpacked_size});
    }
    if (bytes != t.unpacked_bytes) {
      return bad(where + " says " + std::to_string(t.unpacked_bytes) + " bytes, its chunks hold " +
                 std::to_string(bytes));
    }
    if (info.has_verification && xet::verification_hash(term_hashes) != t.verification)
      return bad(where + " has a verification hash that does not match its chunks");
    file.size += bytes;
    file.terms.push_back(xet::FileTerm{t.xorb, t.chunk_start, t.chunk_end, t.unpacked_bytes, {}});
  }
  if (xet::file_hash(leaves) != info.file_hash)
    return bad("file " + name + " is not the file its chunks make (their file hash is " + xet::file_hash(leaves).str() + ")");
  return file;
}

Expected<xet::Reconstruction> plan_reconstruction(const XetFile& file, std::uint64_t first, std::uint64_t last,
                                                  XorbCache& xorbs, const FetchUrl& url_for) {
  xet::Reconstruction plan;
  const std::uint64_t end = last + 1;  // [first, end)
  std::map<xet::Hash, std::vector<std::pair<std::uint32_t, std::uint32_t>>> runs;
  std::uint64_t pos = 0;  // file offset of the current term
  bool first_kept = true;
  for (const auto& t : file.terms) {
    const std::uint64_t term_end = pos + t.unpacked_bytes;
    if (term_end <= first) {  // wholly before the range
      pos = term_end;
      continue;
    }
    if (pos >= end) break;
    KHUB_TRY(const StoredXorb* xorb, xorbs.get(t.xorb));
    if (!xorb || t.chunk_end > xorb->chunks.size())
      return Error(ErrorCode::Io, "xorb " + t.xorb.str() + " of Xet file " + file.hash.str() + " is missing");
    std::uint32_t s = t.chunk_start, e = t.chunk_end;
    std::uint64_t start_pos = pos, end_pos = term_end;
    // Leading chunks that end at or before `first`, trailing ones that start at or after `end`.
    while (s + 1 < e && start_pos + xorb->chunks[s].unpacked_size <= first) start_pos += xorb->chunks[s++].unpacked_size;
    while (e - 1 > s && end_pos - xorb->chunks[e - 1].unpacked_size >= end) end_pos -= xorb->chunks[--e].unpacked_size;
    if (first_kept) {
      plan.offset_into_first_range = first > start_pos ? first - start_pos : 0;
      first_kept = false;
    }
    plan.terms.push_back(xet::ReconstructionTerm{t.xorb, static_cast<std::uint32_t>(end_pos - start_pos), s, e});
    runs[t.xorb].emplace_back(s, e);
    pos = term_end;
  }
  // One fetch entry per run of overlapping or adjacent chunk ranges of a xorb.
  for (auto& [hash, ranges] : runs) {
    KHUB_TRY(const StoredXorb* xorb, xorbs.get(hash));
    std::sort(ranges.begin(), ranges.end());
    auto& entries = plan.fetch_info[hash];
    for (const auto& [s, e] : ranges) {
      if (!entries.empty() && s <= entries.back().chunk_end) {
        entries.back().chunk_end = std::max(entries.back().chunk_end, e);
      } else {
        entries.push_back(xet::FetchInfo{s, e, {}, 0, 0});
      }
    }
    for (auto& f : entries) {
      f.byte_start = xorb->chunks[f.chunk_start].record_start;
      f.byte_end = xorb->chunks[f.chunk_end - 1].record_end - 1;
      f.url = url_for(hash, f.byte_start, f.byte_end);
    }
  }
  return plan;
}

}  // namespace khub::localhub
