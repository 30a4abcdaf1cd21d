#include "khub/xet/upload.h"

#include <algorithm>
#include <fstream>

namespace khub::xet {

UploadPlanner::UploadPlanner(const KnownChunks& known, XorbSink sink, PackOptions options, BufferSource buffers)
    : known_(known), sink_(std::move(sink)), options_(options), buffers_(std::move(buffers)), writer_(fresh_writer()) {}

XorbWriter UploadPlanner::fresh_writer() {
  std::vector<std::byte> buffer;
  if (buffers_) buffer = buffers_();
  // Room for a whole xorb (a record is at most its chunk and a header: incompressible chunks are
  // stored raw), so that records never move while it fills. Untouched, the room costs nothing.
  buffer.reserve(std::min(options_.max_xorb_bytes, kMaxXorbBytes) +
                 std::min(options_.max_xorb_chunks, kMaxXorbChunks) * kRecordHeaderSize);
  return XorbWriter(options_.compression, std::move(buffer));
}

Expected<FilePlan> UploadPlanner::add_file(const ScannedFile& file, const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot read " + path.string());
  return add(file, [&](std::uint64_t offset, std::span<std::byte> out) -> Status {
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    if (static_cast<std::size_t>(in.gcount()) != out.size()) {
      return Error(ErrorCode::Integrity, path.string() + " changed while it was being uploaded (it is shorter now)");
    }
    return {};
  });
}

Expected<FilePlan> UploadPlanner::add_bytes(const ScannedFile& file, std::span<const std::byte> data) {
  return add(file, [&](std::uint64_t offset, std::span<std::byte> out) -> Status {
    if (offset + out.size() > data.size()) return Error(ErrorCode::Integrity, "data is shorter than scanned");
    std::copy_n(data.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
    return {};
  });
}

Expected<FilePlan> UploadPlanner::add(const ScannedFile& file, const ReadAt& read) {
  if (finished_) return Error(ErrorCode::InvalidArgument, "upload planner: add after finish");
  FilePlan plan;
  PendingFile pending{file.file_hash, file.sha256_hex, {}};
  std::vector<Hash> term_chunks;  // chunk hashes of the term being built, for its verification hash
  auto close_term = [&] {
    if (!term_chunks.empty()) pending.terms.back().verification = verification_hash(term_chunks);
    term_chunks.clear();
  };
  auto extend = [&](const XorbRef& xorb, std::uint32_t index, const HashedSize& chunk) {
    if (pending.terms.empty() || !(pending.terms.back().xorb == xorb) || pending.terms.back().chunk_end != index) {
      close_term();
      pending.terms.push_back({xorb, index, index, 0, {}});
    }
    auto& term = pending.terms.back();
    term.chunk_end = index + 1;
    term.unpacked_bytes += static_cast<std::uint32_t>(chunk.size);
    term_chunks.push_back(chunk.hash);
  };

  std::vector<std::byte> bytes;
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < file.chunks.size(); offset += file.chunks[i].size, ++i) {
    const HashedSize& chunk = file.chunks[i];
    if (auto where = known_.find(chunk.hash)) {
      extend({false, 0, where->xorb}, where->index, chunk);
      plan.deduplicated_bytes += chunk.size;
      continue;
    }
    if (auto it = packed_.find(chunk.hash); it != packed_.end()) {
      const auto [slot, index] = it->second;
      extend(slot < sealed_.size() ? XorbRef{false, 0, sealed_[slot]} : XorbRef{true, slot, {}}, index, chunk);
      plan.deduplicated_bytes += chunk.size;
      continue;
    }
    bytes.resize(chunk.size);
    KHUB_CHECK(read(offset, bytes));
    if (chunk_hash(bytes) != chunk.hash) {
      return Error(ErrorCode::Integrity, "a file changed while it was being uploaded (chunk at byte " +
                                             std::to_string(offset) + " differs from its first read)");
    }
    const bool fits = writer_.chunks().size() < options_.max_xorb_chunks &&
                      writer_.unpacked_size() + chunk.size <= options_.max_xorb_bytes && writer_.fits(chunk.size);
    if (!writer_.empty() && !fits) KHUB_CHECK(seal());
    const auto index = static_cast<std::uint32_t>(writer_.chunks().size());
    writer_chunks_.push_back({chunk.hash, static_cast<std::uint32_t>(writer_.unpacked_size()),
                              static_cast<std::uint32_t>(chunk.size),
                              is_dedup_candidate(chunk.hash, i) ? 0x80000000u : 0u});
    writer_.add(bytes, chunk.hash);
    packed_[chunk.hash] = {slot_, index};
    extend({true, slot_, {}}, index, chunk);
    plan.new_bytes += chunk.size;
  }
  close_term();
  files_.push_back(std::move(pending));
  return plan;
}

Status UploadPlanner::seal() {
  if (writer_.empty()) return {};
  NewXorb x;
  x.hash = writer_.hash();
  x.records = writer_.take_records();
  x.unpacked_bytes = writer_.unpacked_size();
  x.chunk_count = writer_.chunks().size();
  // num_bytes_on_disk stays 0, as hf_xet 1.8.0 sends it: the CAS measures the body itself.
  new_xorbs_.push_back({x.hash, std::move(writer_chunks_), static_cast<std::uint32_t>(x.unpacked_bytes), 0});
  writer_chunks_.clear();
  sealed_.push_back(x.hash);
  ++slot_;
  writer_ = fresh_writer();
  return sink_(std::move(x));
}

Expected<Shard> UploadPlanner::finish() {
  if (finished_) return Error(ErrorCode::InvalidArgument, "upload planner: finish called twice");
  KHUB_CHECK(seal());
  finished_ = true;
  Shard shard;
  std::set<Hash> seen;
  for (const auto& f : files_) {
    if (!seen.insert(f.file_hash).second) continue;  // the same content under two paths
    FileInfo info;
    info.file_hash = f.file_hash;
    info.has_verification = true;
    info.sha256 = hash_from_sha256_hex(f.sha256_hex);
    for (const auto& t : f.terms) {
      const Hash xorb = t.xorb.is_new ? sealed_.at(t.xorb.slot) : t.xorb.hash;
      info.terms.push_back({xorb, t.chunk_start, t.chunk_end, t.unpacked_bytes, t.verification});
    }
    shard.files.push_back(std::move(info));
  }
  shard.xorbs = std::move(new_xorbs_);
  return shard;
}

}  // namespace khub::xet
