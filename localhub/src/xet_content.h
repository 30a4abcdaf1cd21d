#pragma once
// Xet content on the server's side: chunks read back out of stored xorbs, a shard's file checked
// against them, and the reconstruction answer for a byte range of a file (docs/localhub.md "Xet").
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "khub/localhub/store.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/shard.h"

namespace khub::localhub {

/// The stored xorbs one request looks at, read from the store once while they fit: the chunk
/// tables held stay under kMaxCachedChunks (a shard may name many xorbs, each with up to 8192
/// chunks), beyond which the cache starts again.
class XorbCache {
 public:
  static constexpr std::size_t kMaxCachedChunks = 1u << 20;  // 48 MiB of chunk table
  explicit XorbCache(const RepoStore& store) : store_(store) {}
  /// The xorb, or nullptr when the store has none of that name. Valid until the next get().
  [[nodiscard]] Expected<const StoredXorb*> get(const xet::Hash& xorb);

 private:
  const RepoStore& store_;
  std::map<xet::Hash, std::optional<StoredXorb>> seen_;
  std::size_t chunks_ = 0;
};

using ByteSink = std::function<Status(std::string_view)>;

/// Streams the content of chunks [start, end) of a stored xorb, decoding their records from the
/// xorb's blob. Io when the blob is missing or does not hold what the chunk table says.
[[nodiscard]] Status read_chunks(const BlobStore& blobs, const StoredXorb& xorb, std::uint32_t start,
                                 std::uint32_t end, const ByteSink& sink);

/// Streams a registered file's content, term by term.
[[nodiscard]] Status read_file(const BlobStore& blobs, const XetFile& file, XorbCache& xorbs, const ByteSink& sink);

/// The most chunk references one shard may make (its files' terms together): bounds the memory and
/// work a shard costs. 2^21 chunks of 64 KiB on average is 128 GiB of content.
inline constexpr std::uint64_t kMaxShardChunkRefs = 1u << 21;

/// Checks one file of an uploaded shard against the stored xorbs: each term names a stored xorb and
/// chunks inside it, holds the bytes it says, has the verification hash of those chunks (when the
/// shard has them), and all chunks together give the file hash. `chunk_refs` counts chunks across
/// the shard's files (kMaxShardChunkRefs). Returns the file as the store keeps it; InvalidArgument
/// with the reason otherwise.
[[nodiscard]] Expected<XetFile> check_shard_file(const xet::FileInfo& info, XorbCache& xorbs,
                                                 std::uint64_t& chunk_refs);

/// Where records of a xorb can be fetched: called with the xorb and the inclusive byte range.
using FetchUrl = std::function<std::string(const xet::Hash& xorb, std::uint64_t first, std::uint64_t last)>;

/// The reconstruction answer for content bytes [first, last] of `file` (first <= last < size): the
/// terms covering them, trimmed to the chunks that hold them, and one fetch entry per merged run of
/// chunks of each xorb.
[[nodiscard]] Expected<xet::Reconstruction> plan_reconstruction(const XetFile& file, std::uint64_t first,
                                                                std::uint64_t last, XorbCache& xorbs,
                                                                const FetchUrl& url_for);

}  // namespace khub::localhub
