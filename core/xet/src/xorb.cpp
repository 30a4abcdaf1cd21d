#include "khub/xet/xorb.h"

#include <lz4frame.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

namespace khub::xet {
namespace {

constexpr char kFooterMagic[] = "XETBLOB";  // a local store's footer follows the last record
constexpr std::size_t kMaxChunkContent = 128 * 1024;  // the chunker's maximum
constexpr std::size_t kMaxPayload = 2 * kMaxChunkContent;

std::uint32_t read_u24(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16;
}

void put_u24(std::byte* p, std::size_t v) {
  p[0] = static_cast<std::byte>(v & 0xff);
  p[1] = static_cast<std::byte>((v >> 8) & 0xff);
  p[2] = static_cast<std::byte>((v >> 16) & 0xff);
}

Error bad_record(std::string what) { return Error(ErrorCode::Protocol, "xet chunk record: " + what); }

struct DctxDeleter {
  void operator()(LZ4F_dctx* c) const { LZ4F_freeDecompressionContext(c); }
};

// Decodes exactly one LZ4 frame into exactly `expected` bytes appended to `out`.
Status lz4_frame_decode(std::span<const std::byte> frame, std::size_t expected, std::vector<std::byte>& out) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
    return Error(ErrorCode::Io, "cannot create an LZ4 decompression context");
  std::unique_ptr<LZ4F_dctx, DctxDeleter> ctx(raw);
  const std::size_t base = out.size();
  out.resize(base + expected + 1);  // one spare byte shows a payload longer than its header says
  std::size_t produced = 0, consumed = 0;
  for (;;) {
    std::size_t dst = expected + 1 - produced, src = frame.size() - consumed;
    const std::size_t r = LZ4F_decompress(ctx.get(), out.data() + base + produced, &dst,
                                          frame.data() + consumed, &src, nullptr);
    if (LZ4F_isError(r)) return bad_record(std::string("LZ4 frame: ") + LZ4F_getErrorName(r));
    produced += dst;
    consumed += src;
    if (produced > expected) return bad_record("decompresses to more bytes than its header says");
    if (r == 0) break;
    if (dst == 0 && src == 0) return bad_record("LZ4 frame is truncated");
  }
  if (consumed != frame.size()) return bad_record("bytes after the LZ4 frame");
  if (produced != expected) return bad_record("decompresses to fewer bytes than its header says");
  out.resize(base + expected);
  return {};
}

// Encodes `data` as one LZ4 frame into `out` (resized to fit; its capacity is kept between calls).
// Returns the frame's size, 0 when it cannot be encoded (the chunk is stored raw then).
std::size_t lz4_frame_encode(std::span<const std::byte> data, std::vector<std::byte>& out) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.blockSizeID = LZ4F_max256KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  out.resize(LZ4F_compressFrameBound(data.size(), &prefs));
  const std::size_t n = LZ4F_compressFrame(out.data(), out.size(), data.data(), data.size(), &prefs);
  return LZ4F_isError(n) ? 0 : n;  // cannot fail with a bound-sized buffer
}

// Byte grouping: byte i goes to plane i mod 4; the planes are concatenated.
void group_bytes(std::span<const std::byte> data, std::vector<std::byte>& out) {
  out.resize(data.size());
  const std::size_t n = data.size();
  std::size_t at = 0;
  for (std::size_t plane = 0; plane < 4; ++plane)
    for (std::size_t i = plane; i < n; i += 4) out[at++] = data[i];
}

void ungroup_bytes(std::span<const std::byte> grouped, std::byte* out) {
  const std::size_t n = grouped.size();
  std::size_t at = 0;
  for (std::size_t plane = 0; plane < 4; ++plane)
    for (std::size_t i = plane; i < n; i += 4) out[i] = grouped[at++];
}

}  // namespace

Expected<std::size_t> record_length(std::span<const std::byte> header) {
  if (header.size() < kRecordHeaderSize) return bad_record("truncated header");
  const std::byte* h = header.data();
  if (static_cast<std::uint8_t>(h[0]) != 0)
    return bad_record("version " + std::to_string(static_cast<int>(h[0])) + " (khub reads version 0)");
  const std::size_t payload = read_u24(h + 1);
  const std::size_t unpacked = read_u24(h + 5);
  if (unpacked > kMaxChunkContent)
    return bad_record("chunk of " + std::to_string(unpacked) + " bytes (at most 131072)");
  if (payload > kMaxPayload) return bad_record("payload of " + std::to_string(payload) + " bytes");
  return kRecordHeaderSize + payload;
}

Expected<std::size_t> decode_record(std::span<const std::byte> records, std::vector<std::byte>& out) {
  KHUB_TRY(const std::size_t length, record_length(records));
  if (records.size() < length) return bad_record("truncated payload");
  const std::byte* h = records.data();
  const std::size_t payload = length - kRecordHeaderSize;
  const auto scheme = static_cast<std::uint8_t>(h[4]);
  const std::size_t unpacked = read_u24(h + 5);
  const auto body = records.subspan(kRecordHeaderSize, payload);
  switch (scheme) {
    case static_cast<std::uint8_t>(Compression::None):
      if (payload != unpacked) return bad_record("raw payload size differs from its chunk size");
      out.insert(out.end(), body.begin(), body.end());
      break;
    case static_cast<std::uint8_t>(Compression::Lz4):
      KHUB_CHECK(lz4_frame_decode(body, unpacked, out));
      break;
    case static_cast<std::uint8_t>(Compression::ByteGrouping4Lz4): {
      std::vector<std::byte> grouped;
      KHUB_CHECK(lz4_frame_decode(body, unpacked, grouped));
      const std::size_t base = out.size();
      out.resize(base + unpacked);
      ungroup_bytes(grouped, out.data() + base);
      break;
    }
    default:
      return bad_record("compression scheme " + std::to_string(scheme) + " (khub reads 0, 1, 2)");
  }
  return kRecordHeaderSize + payload;
}

Expected<XorbIndex> index_xorb(std::span<const std::byte> body) {
  XorbIndex index;
  std::vector<HashedSize> leaves;
  std::vector<std::byte> chunk;
  std::size_t at = 0;
  while (at < body.size()) {
    const auto rest = body.subspan(at);
    if (rest.size() >= 7 && std::memcmp(rest.data(), kFooterMagic, 7) == 0) break;
    if (index.chunks.size() == kMaxXorbChunks)
      return Error(ErrorCode::InvalidArgument, "xorb has more than 8192 chunks");
    chunk.clear();
    KHUB_TRY(const std::size_t length, decode_record(rest, chunk));
    if (index.unpacked_size + chunk.size() > kMaxXorbBytes)
      return Error(ErrorCode::InvalidArgument, "xorb holds more than 64 MiB of content");
    XorbChunk c;
    c.hash = chunk_hash(chunk);
    c.record_start = static_cast<std::uint32_t>(at);
    c.record_end = static_cast<std::uint32_t>(at + length);
    c.unpacked_start = static_cast<std::uint32_t>(index.unpacked_size);
    c.unpacked_size = static_cast<std::uint32_t>(chunk.size());
    index.chunks.push_back(c);
    leaves.push_back({c.hash, c.unpacked_size});
    index.unpacked_size += chunk.size();
    at += length;
  }
  if (index.chunks.empty()) return Error(ErrorCode::Protocol, "xorb holds no chunks");
  index.records_size = at;
  index.hash = xorb_hash(leaves);
  return index;
}

void append_record(std::vector<std::byte>& records, std::span<const std::byte> chunk, Compression compression) {
  // Scratch space reused from chunk to chunk: packing allocates nothing per chunk.
  thread_local std::vector<std::byte> grouped, packed;
  std::span<const std::byte> payload = chunk;
  if (compression == Compression::Lz4 || compression == Compression::ByteGrouping4Lz4) {
    std::span<const std::byte> input = chunk;
    if (compression == Compression::ByteGrouping4Lz4) {
      group_bytes(chunk, grouped);
      input = grouped;
    }
    const std::size_t n = lz4_frame_encode(input, packed);
    if (n > 0 && n < chunk.size()) payload = std::span<const std::byte>(packed).first(n);
  }
  if (payload.data() == chunk.data()) compression = Compression::None;  // stored raw: it did not shrink
  std::byte h[kRecordHeaderSize];
  h[0] = std::byte{0};
  put_u24(h + 1, payload.size());
  h[4] = static_cast<std::byte>(compression);
  put_u24(h + 5, chunk.size());
  records.insert(records.end(), h, h + kRecordHeaderSize);
  records.insert(records.end(), payload.begin(), payload.end());
}

Compression choose_compression(std::span<const std::byte> sample) {
  // Histogram of set bits per byte, for each byte position mod 4, against the pooled histogram: a
  // position whose distribution differs (KL divergence above 0.02) means planes compress better apart.
  double counts[4][9] = {};
  double pooled[9] = {};
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const int bits = std::popcount(static_cast<unsigned>(sample[i]));
    counts[i % 4][bits] += 1;
    pooled[bits] += 1;
  }
  double pooled_total = 0;
  for (double v : pooled) pooled_total += v + 1;
  double worst = 0;
  for (const auto& plane : counts) {
    double total = 0;
    for (double v : plane) total += v + 1;
    double kl = 0;
    for (int b = 0; b < 9; ++b) {
      const double p = (plane[b] + 1) / total, q = (pooled[b] + 1) / pooled_total;
      kl += p * std::log(p / q);
    }
    worst = std::max(worst, kl);
  }
  return worst > 0.02 ? Compression::ByteGrouping4Lz4 : Compression::Lz4;
}

bool XorbWriter::fits(std::size_t size) const {
  return chunks_.size() < kMaxXorbChunks && unpacked_ + size <= kMaxXorbBytes;
}

void XorbWriter::add(std::span<const std::byte> chunk, const Hash& hash) {
  Compression scheme = Compression::None;
  if (policy_ == CompressionPolicy::Lz4) scheme = Compression::Lz4;
  if (policy_ == CompressionPolicy::Auto) {
    // As hf_xet: the choice is made on the first chunk of every 32 and kept for the others.
    if (chunks_.size() % 32 == 0) block_choice_ = choose_compression(chunk);
    scheme = block_choice_;
  }
  append_record(records_, chunk, scheme);
  chunks_.push_back({hash, chunk.size()});
  unpacked_ += chunk.size();
}

Hash XorbWriter::hash() const { return xorb_hash(chunks_); }

}  // namespace khub::xet
