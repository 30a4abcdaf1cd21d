#include "xet_upload.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "digest_claims.h"
#include "khub/base/hash.h"
#include "xorb_sender.h"

namespace khub::publish::detail {
namespace {

std::uint64_t unix_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

// Runs fn(0 … count-1) on up to `threads` threads; the first failure stops the others early.
Status parallel_for(std::size_t count, std::size_t threads, const std::function<Status(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::optional<Error> failure;
  auto run = [&] {
    for (std::size_t i; (i = next++) < count;) {
      {
        std::lock_guard lock(mutex);
        if (failure) return;
      }
      if (auto st = fn(i); !st) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::move(st).error();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::min(threads, count); ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  if (failure) return *failure;
  return {};
}

// The scan's sha256 is not the one the plan holds: a claim that did not hold, or a file written
// since the check read it.
Error not_as_planned(const LocalFile& file, const std::string& scanned_sha256) {
  if (file.sha256_claimed) return claim_broken(file, scanned_sha256);
  return Error(ErrorCode::Integrity, file.source.string() + " changed while it was being pushed",
               "push again once the build is finished");
}

// The first pass over every file. The plan hashed each file before; a file whose bytes changed
// since would be committed under the wrong oid. While the process remembers that sha256 for the
// file as it is (HashReuse::Unchanged: same inode, size, mtime and ctime) before and after the
// scan, the scan reuses it instead of hashing every byte again.
Expected<std::vector<xet::ScannedFile>> scan_all(const std::vector<const LocalFile*>& files, std::size_t threads) {
  std::vector<xet::ScannedFile> scans(files.size());
  KHUB_CHECK(parallel_for(files.size(), threads, [&](std::size_t i) -> Status {
    const auto& source = files[i]->source;
    const auto before = remembered_hash(source, HashAlgorithm::Sha256);
    const bool known = before && to_hex(*before) == files[i]->sha256;
    KHUB_TRY(scans[i], xet::scan_file(source, !known));
    if (known) {
      const auto after = remembered_hash(source, HashAlgorithm::Sha256);
      if (after && *after == *before) scans[i].sha256_hex = files[i]->sha256;
    }
    if (scans[i].sha256_hex != files[i]->sha256) return not_as_planned(*files[i], scans[i].sha256_hex);
    return {};
  }));
  return scans;
}

// hf_xet's global dedup: the CAS is asked about each file's first chunk and the chunks whose hash
// ends in 0 mod 1024 (those it indexes); every answer names whole xorbs, which usually cover
// much of the file around the chunk asked about.
Status learn_from_global_dedup(CasSession& cas, const std::vector<xet::ScannedFile>& scans, xet::KnownChunks& known,
                               std::size_t threads) {
  std::set<xet::Hash> asked;
  std::vector<xet::Hash> candidates;
  for (const auto& s : scans) {
    for (std::size_t i = 0; i < s.chunks.size(); ++i) {
      if (xet::is_dedup_candidate(s.chunks[i].hash, i) && asked.insert(s.chunks[i].hash).second)
        candidates.push_back(s.chunks[i].hash);
    }
  }
  std::mutex mutex;
  return parallel_for(candidates.size(), threads, [&](std::size_t i) -> Status {
    {
      std::lock_guard lock(mutex);
      if (known.find(candidates[i])) return {};  // an earlier answer covered it
    }
    KHUB_TRY(auto answer, cas.find_chunk(candidates[i]));
    if (answer) {
      std::lock_guard lock(mutex);
      known.add_shard(*answer, unix_now());
    }
    return {};
  });
}

// Global-dedup questions for files that stream: asked in the background while the file is packed;
// each answer reaches the planner between two chunks and serves the chunks after it (hf_xet does
// the same: a question never holds the upload up).
class DedupAsker {
 public:
  explicit DedupAsker(CasSession& cas) : cas_(cas) {}
  ~DedupAsker() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  DedupAsker(const DedupAsker&) = delete;
  DedupAsker& operator=(const DedupAsker&) = delete;

  // Asks once per chunk hash.
  void ask(const xet::Hash& chunk) {
    std::lock_guard lock(mutex_);
    if (!asked_.insert(chunk).second) return;
    questions_.push_back(chunk);
    if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
    changed_.notify_all();
  }

  // Moves the answers received so far into `known`; the first failure of a question.
  Status drain(xet::KnownChunks& known) {
    if (!news_.load(std::memory_order_acquire)) return {};
    std::lock_guard lock(mutex_);
    news_ = false;
    for (auto& answer : answers_) known.add_shard(answer, unix_now());
    answers_.clear();
    if (failure_) return *failure_;
    return {};
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return closing_ || !questions_.empty(); });
      if (closing_ || failure_) return;
      const xet::Hash chunk = questions_.front();
      questions_.pop_front();
      lock.unlock();
      auto answer = cas_.find_chunk(chunk);
      lock.lock();
      if (!answer) {
        failure_ = std::move(answer).error();
        news_ = true;
      } else if (*answer) {
        answers_.push_back(std::move(**answer));
        news_ = true;
      }
    }
  }

  CasSession& cas_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<xet::Hash> asked_;
  std::deque<xet::Hash> questions_;
  std::vector<xet::Shard> answers_;
  std::optional<Error> failure_;
  std::atomic<bool> news_{false};
  bool closing_ = false;
  std::thread worker_;
};

// Packs a file while it is read, once: each chunk goes to the planner as the scan finds it. The
// sha256 is computed on the way unless the process remembers it for the file as it is.
Expected<xet::FilePlan> stream_file(const LocalFile& file, xet::UploadPlanner& planner, DedupAsker& asker,
                                    xet::KnownChunks& known) {
  const auto before = remembered_hash(file.source, HashAlgorithm::Sha256);
  const bool sha_known = before && to_hex(*before) == file.sha256;
  KHUB_CHECK(planner.begin_file());
  std::size_t index = 0;
  KHUB_TRY(auto scan, xet::scan_file(file.source, !sha_known,
                                     [&](const xet::HashedSize& chunk, std::span<const std::byte> bytes) -> Status {
                                       if (xet::is_dedup_candidate(chunk.hash, index++) && !known.find(chunk.hash))
                                         asker.ask(chunk.hash);
                                       KHUB_CHECK(asker.drain(known));
                                       return planner.add_chunk(chunk, bytes);
                                     }));
  if (sha_known) {
    const auto after = remembered_hash(file.source, HashAlgorithm::Sha256);
    if (after && *after == *before) scan.sha256_hex = file.sha256;
  }
  if (scan.sha256_hex != file.sha256) return not_as_planned(file, scan.sha256_hex);
  return planner.end_file(scan.file_hash, scan.sha256_hex);
}

// New xorbs are cut at 16 MiB of content, not the format's 64 MiB: a CAS checks and stores a xorb
// once its last byte is in, so smaller ones let it work on the first while the next arrive, and
// less is left to do after the last byte. 256 MiB to khub serve on loopback, five pushes each
// (medians, against huggingface_hub + hf_xet's 64 MiB xorbs in the same runs): 64 MiB 1.55-1.60 s,
// 32 MiB 1.32-1.33 s, 16 MiB 1.15-1.32 s, 8 MiB 1.16-1.22 s (hf_xet 1.42-1.56 s). 16 MiB keeps
// requests few for real networks (one per 16 MiB, four at once) and the sender's memory at 96 MiB.
constexpr std::size_t kUploadXorbBytes = std::size_t{16} << 20;

// How much of a replaced file is read first, to see whether the new version shares any of it.
constexpr std::uint64_t kProbeBytes = 1u << 20;

struct Decoded {
  std::uint32_t chunks = 0;   // whole records decoded
  std::size_t wanted = 0;     // of them, chunks the new file has
};

// Learns the chunks of the whole records at the start of `records`: chunks `first`, `first + 1`, …
// (before `end`) of `xorb`. Stops at a record cut off (or broken): the caller decides whether
// that was expected.
Decoded learn_records(std::string_view records, const xet::Hash& xorb, std::uint32_t first, std::uint32_t end,
                      const std::set<xet::Hash>& wanted, xet::KnownChunks& known) {
  Decoded out;
  std::span<const std::byte> rest = std::as_bytes(std::span(records));
  std::vector<std::byte> chunk;
  for (std::uint32_t i = first; i < end && !rest.empty(); ++i, ++out.chunks) {
    chunk.clear();
    auto used = xet::decode_record(rest, chunk);
    if (!used) break;
    rest = rest.subspan(*used);
    const xet::Hash hash = xet::chunk_hash(chunk);
    out.wanted += wanted.contains(hash);
    known.add(hash, {xorb, i});
  }
  return out;
}

// Reads back the records of `old`'s chunks that no dedup answer covered, through its
// reconstruction, and learns their hashes: what the new version of a file most likely shares with
// the one it replaces. Costs a download of those records (returned), never an upload. The first
// MiB is read alone: a rewritten file shares none of it, and reading the rest back would be a
// download for nothing.
Expected<std::uint64_t> learn_from_replaced(CasSession& cas, const RemoteFile& old, const xet::ScannedFile& now,
                                            xet::KnownChunks& known) {
  std::set<xet::Hash> wanted;
  for (const auto& c : now.chunks)
    if (!known.find(c.hash)) wanted.insert(c.hash);
  const auto file = old.xet_hash ? xet::parse_hash(*old.xet_hash) : std::nullopt;
  if (wanted.empty() || !file || old.size == 0) return std::uint64_t{0};
  KHUB_TRY(auto stored, cas.reconstruction(*file, old.size));
  if (!stored || stored->terms.empty()) return std::uint64_t{0};  // the CAS no longer has it

  std::uint64_t fetched = 0;
  const auto entry_of = [&](const xet::ReconstructionTerm& term) -> const xet::FetchInfo* {
    const auto entries = stored->fetch_info.find(term.xorb);
    if (entries == stored->fetch_info.end()) return nullptr;
    for (const auto& where : entries->second)
      if (where.chunk_start <= term.chunk_start && term.chunk_start < where.chunk_end) return &where;
    return nullptr;
  };
  if (const auto* first = entry_of(stored->terms.front());
      first && first->byte_end - first->byte_start + 1 > kProbeBytes) {
    xet::FetchInfo probe = *first;
    probe.byte_end = probe.byte_start + kProbeBytes - 1;
    KHUB_TRY(auto records, cas.fetch(probe));
    fetched += records.size();
    if (learn_records(records, stored->terms.front().xorb, probe.chunk_start, probe.chunk_end, wanted, known).wanted == 0)
      return fetched;
  }

  std::set<std::pair<xet::Hash, std::uint32_t>> done;  // fetch entries read, by xorb and first chunk
  for (const auto& term : stored->terms) {
    const auto entries = stored->fetch_info.find(term.xorb);
    if (entries == stored->fetch_info.end()) continue;  // parse_reconstruction requires one
    for (const auto& where : entries->second) {
      if (where.chunk_end <= term.chunk_start || where.chunk_start >= term.chunk_end) continue;
      bool needed = false;
      for (std::uint32_t i = std::max(where.chunk_start, term.chunk_start); i < std::min(where.chunk_end, term.chunk_end); ++i)
        needed = needed || !known.holds(term.xorb, i);
      if (!needed || !done.insert({term.xorb, where.chunk_start}).second) continue;
      KHUB_TRY(auto records, cas.fetch(where));
      fetched += records.size();
      if (learn_records(records, term.xorb, where.chunk_start, where.chunk_end, wanted, known).chunks !=
          where.chunk_end - where.chunk_start) {
        return Error(ErrorCode::Protocol, "the records the CAS sent for xorb " + term.xorb.str() + " do not decode");
      }
    }
  }
  return fetched;
}

}  // namespace

Expected<XetUploadResult> upload_with_xet(CasSession& cas, const std::vector<const LocalFile*>& files,
                                          const std::map<std::string, RemoteFile>& replaced,
                                          const XetUploadOptions& options) {
  XetUploadResult result;
  // A file that replaces a Xet-stored version is scanned first: its chunks decide which of the old
  // version's records are worth reading back. Every other file is packed as it is read.
  std::vector<const LocalFile*> rescanned, streamed;
  for (const auto* f : files) (replaced.contains(f->repo_path) ? rescanned : streamed).push_back(f);
  KHUB_TRY(auto scans, scan_all(rescanned, options.parallel));
  xet::KnownChunks known;
  KHUB_CHECK(learn_from_global_dedup(cas, scans, known, options.parallel));
  for (std::size_t i = 0; i < rescanned.size(); ++i) {
    KHUB_TRY(auto fetched, learn_from_replaced(cas, replaced.at(rescanned[i]->repo_path), scans[i], known));
    result.bytes_fetched += fetched;
  }

  XorbSender sender(cas, options.parallel);
  xet::PackOptions pack;
  pack.max_xorb_bytes = kUploadXorbBytes;
  xet::UploadPlanner planner(known, [&](xet::NewXorb x) { return sender.submit(std::move(x)); }, pack,
                            [&] { return sender.spare_records(); });
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < rescanned.size(); ++i) {
    KHUB_TRY(auto plan, planner.add_file(scans[i], rescanned[i]->source));
    result.bytes_deduplicated += plan.deduplicated_bytes;
    total += scans[i].size;
  }
  DedupAsker asker(cas);
  for (const auto* f : streamed) {
    KHUB_TRY(auto plan, stream_file(*f, planner, asker, known));
    result.bytes_deduplicated += plan.deduplicated_bytes;
    total += plan.new_bytes + plan.deduplicated_bytes;
  }
  auto shard = planner.finish();
  const Status stored = sender.finish();  // every xorb first: the shard may only name stored ones
  if (!shard) return std::move(shard).error();
  KHUB_CHECK(stored);
  KHUB_CHECK(cas.upload_shard(xet::write_shard(*shard)));
  result.bytes_sent = sender.bytes_sent();
  result.xorbs_sent = sender.xorbs_sent();
  if (options.say) {
    std::string line = "Xet: " + std::to_string(files.size()) + " file(s) of " + std::to_string(total) + " bytes: sent " +
                       std::to_string(result.bytes_sent) + " bytes in " + std::to_string(result.xorbs_sent) +
                       " xorb(s), " + std::to_string(result.bytes_deduplicated) + " bytes deduplicated";
    if (result.bytes_fetched > 0)
      line += " (found by reading back " + std::to_string(result.bytes_fetched) + " bytes of the files they replace)";
    options.say(line);
  }
  return result;
}

}  // namespace khub::publish::detail
