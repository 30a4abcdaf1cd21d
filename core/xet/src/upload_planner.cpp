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
  KHUB_CHECK(begin_file());
  std::vector<std::byte> bytes;
  std::uint64_t offset = 0;
  for (const HashedSize& chunk : file.chunks) {
    KHUB_CHECK(place(chunk, [&]() -> Expected<std::span<const std::byte>> {
      bytes.resize(chunk.size);
      KHUB_CHECK(read(offset, bytes));
      if (chunk_hash(bytes) != chunk.hash) {
        return Error(ErrorCode::Integrity, "a file changed while it was being uploaded (chunk at byte " +
                                               std::to_string(offset) + " differs from its first read)");
      }
      return std::span<const std::byte>(bytes);
    }));
    offset += chunk.size;
  }
  return end_file(file.file_hash, file.sha256_hex);
}

Status UploadPlanner::begin_file() {
  if (finished_) return Error(ErrorCode::InvalidArgument, "upload planner: add after finish");
  if (open_) return Error(ErrorCode::InvalidArgument, "upload planner: a file is open already");
  open_ = OpenFile{};
  return {};
}

Status UploadPlanner::add_chunk(const HashedSize& chunk, std::span<const std::byte> bytes) {
  if (!open_) return Error(ErrorCode::InvalidArgument, "upload planner: add_chunk outside a file");
  if (bytes.size() != chunk.size) return Error(ErrorCode::InvalidArgument, "upload planner: chunk size mismatch");
  return place(chunk, [&]() -> Expected<std::span<const std::byte>> { return bytes; });
}

Expected<FilePlan> UploadPlanner::end_file(const Hash& file_hash, std::string sha256_hex) {
  if (!open_) return Error(ErrorCode::InvalidArgument, "upload planner: end_file without begin_file");
  close_term();
  OpenFile done = std::move(*open_);
  open_.reset();
  files_.push_back({file_hash, std::move(sha256_hex), std::move(done.terms)});
  return done.plan;
}

void UploadPlanner::close_term() {
  if (!open_->term_chunks.empty()) open_->terms.back().verification = verification_hash(open_->term_chunks);
  open_->term_chunks.clear();
}

void UploadPlanner::extend(const XorbRef& xorb, std::uint32_t index, const HashedSize& chunk) {
  auto& terms = open_->terms;
  if (terms.empty() || !(terms.back().xorb == xorb) || terms.back().chunk_end != index) {
    close_term();
    terms.push_back({xorb, index, index, 0, {}});
  }
  terms.back().chunk_end = index + 1;
  terms.back().unpacked_bytes += static_cast<std::uint32_t>(chunk.size);
  open_->term_chunks.push_back(chunk.hash);
}

Status UploadPlanner::place(const HashedSize& chunk, const BytesOf& bytes_of) {
  const std::size_t index_in_file = open_->chunks++;
  if (auto where = known_.find(chunk.hash)) {
    extend({false, 0, where->xorb}, where->index, chunk);
    open_->plan.deduplicated_bytes += chunk.size;
    return {};
  }
  if (auto it = packed_.find(chunk.hash); it != packed_.end()) {
    const auto [slot, index] = it->second;
    extend(slot < sealed_.size() ? XorbRef{false, 0, sealed_[slot]} : XorbRef{true, slot, {}}, index, chunk);
    open_->plan.deduplicated_bytes += chunk.size;
    return {};
  }
  KHUB_TRY(const auto bytes, bytes_of());
  const bool fits = writer_.chunks().size() < options_.max_xorb_chunks &&
                    writer_.unpacked_size() + chunk.size <= options_.max_xorb_bytes && writer_.fits(chunk.size);
  if (!writer_.empty() && !fits) KHUB_CHECK(seal());
  const auto index = static_cast<std::uint32_t>(writer_.chunks().size());
  writer_chunks_.push_back({chunk.hash, static_cast<std::uint32_t>(writer_.unpacked_size()),
                            static_cast<std::uint32_t>(chunk.size),
                            is_dedup_candidate(chunk.hash, index_in_file) ? 0x80000000u : 0u});
  writer_.add(bytes, chunk.hash);
  packed_[chunk.hash] = {slot_, index};
  extend({true, slot_, {}}, index, chunk);
  open_->plan.new_bytes += chunk.size;
  return {};
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
  if (open_) return Error(ErrorCode::InvalidArgument, "upload planner: finish with a file still open");
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
