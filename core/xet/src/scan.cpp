#include "khub/xet/upload.h"

#include <cstring>
#include <fstream>

#include "khub/base/hash.h"
#include "khub/xet/chunker.h"

namespace khub::xet {
namespace {

// Reads in large blocks. Chunks inside a block are hashed where they lie; only a chunk that
// straddles two blocks is copied (at most 128 KiB per block).
constexpr std::size_t kBlock = std::size_t{8} << 20;

class Scanner {
 public:
  Scanner(bool sha256, const ChunkSink& sink) : sha256_(sha256), sha_(HashAlgorithm::Sha256), sink_(sink) {}

  // The file's next bytes: whole chunks are hashed in place, the unfinished one is kept.
  Status feed(std::span<const std::byte> data) {
    if (sha256_) sha_.update(data);
    out_.size += data.size();
    std::size_t start = 0;  // of the current chunk in `data` (it may have begun in `tail_`)
    std::size_t at = 0;
    while (at < data.size()) {
      const auto cut = chunker_.next_boundary(data.subspan(at));
      if (!cut) break;
      at += *cut;
      KHUB_CHECK(emit(data.subspan(start, at - start)));
      start = at;
    }
    append_to_tail(data.subspan(start));
    return {};
  }

  Expected<ScannedFile> finish() {
    if (!tail_.empty()) {
      const auto last = std::move(tail_);
      tail_.clear();
      KHUB_CHECK(chunk_found(last));
    }
    if (sha256_) out_.sha256_hex = to_hex(sha_.finish());
    out_.file_hash = file_hash(out_.chunks);
    return std::move(out_);
  }

 private:
  // A chunk ends in `piece`; its start may be in the tail kept from the previous block.
  Status emit(std::span<const std::byte> piece) {
    if (tail_.empty()) return chunk_found(piece);
    append_to_tail(piece);
    KHUB_CHECK(chunk_found(tail_));
    tail_.clear();
    return {};
  }

  Status chunk_found(std::span<const std::byte> bytes) {
    out_.chunks.push_back({chunk_hash(bytes), bytes.size()});
    return sink_ ? sink_(out_.chunks.back(), bytes) : Status{};
  }

  // resize + memcpy rather than vector::insert: gcc 13 warns (-Wstringop-overflow) on the inlined
  // insert of a span, wrongly.
  void append_to_tail(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    const std::size_t old = tail_.size();
    tail_.resize(old + bytes.size());
    std::memcpy(tail_.data() + old, bytes.data(), bytes.size());
  }

  Chunker chunker_;
  bool sha256_;
  Hasher sha_;
  const ChunkSink& sink_;
  std::vector<std::byte> tail_;  // bytes of the unfinished chunk (at most 128 KiB)
  ScannedFile out_;
};

}  // namespace

Expected<ScannedFile> scan_file(const std::filesystem::path& path, bool sha256, const ChunkSink& sink) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot read " + path.string());
  Scanner scanner(sha256, sink);
  std::vector<std::byte> block(kBlock);
  for (;;) {
    in.read(reinterpret_cast<char*>(block.data()), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > 0) KHUB_CHECK(scanner.feed(std::span(block).first(got)));
    if (!in) break;
  }
  if (in.bad()) return Error(ErrorCode::Io, "cannot read " + path.string());
  return scanner.finish();
}

ScannedFile scan_bytes(std::span<const std::byte> data) {
  const ChunkSink none;
  Scanner scanner(true, none);
  (void)scanner.feed(data);  // without a sink nothing fails
  return *scanner.finish();
}

bool is_dedup_candidate(const Hash& chunk, std::size_t index_in_file) {
  return index_in_file == 0 || chunk.word(3) % 1024 == 0;
}

}  // namespace khub::xet
