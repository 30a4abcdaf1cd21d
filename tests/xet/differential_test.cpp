// Oracle: hf_xet itself. khub chunks, hashes and reads a few hundred generated inputs, and hf_xet
// (offline, uploading each into a fresh local:// store) must agree on every chunk boundary, chunk
// hash, xorb hash, verification hash, file hash and sha256; khub must also read hf_xet's xorbs
// (raw and compressed by lz4_flex) and shards.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "khub/base/hash.h"
#include "khub/xet/chunker.h"
#include "khub/xet/hash.h"
#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"
#include "python_oracle.h"
#include "test_data.h"

namespace khub::xet {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string kind;
  std::vector<std::byte> bytes;
};

std::vector<std::byte> structured_text(std::size_t n, unsigned seed) {
  std::string s;
  for (unsigned line = 0; s.size() < n; ++line)
    s += "row " + std::to_string(line * seed % 977) + ", the quick brown fox " + std::to_string(line) + "\n";
  s.resize(n);
  auto b = testing::bytes_of(s);
  return {b.begin(), b.end()};
}

std::vector<std::byte> float_like(std::size_t n, unsigned seed) {
  auto out = testing::lcg_bytes(n, seed);
  for (std::size_t i = 2; i < n; i += 4) out[i] = std::byte{0x80}, out[i + 1 < n ? i + 1 : i] = std::byte{0x3f};
  return out;
}

std::vector<Input> generate_inputs() {
  std::vector<Input> in;
  in.push_back({"empty", {}});
  for (std::size_t n : {1, 2, 100, 8191, 8192, 8193, 65536, 131071, 131072, 131073, 262145})
    in.push_back({"edge-" + std::to_string(n), testing::lcg_bytes(n, n)});
  for (std::size_t n : {512, 100000, 1000000, 3 << 20}) in.push_back({"zeros", std::vector<std::byte>(n)});
  std::mt19937_64 rng(2026);
  for (unsigned i = 0; i < 200; ++i) {
    const double log_size = std::uniform_real_distribution<double>(0, 22)(rng);  // 1 B .. 4 MiB
    in.push_back({"random", testing::lcg_bytes(static_cast<std::size_t>(std::exp2(log_size)), rng())});
  }
  for (unsigned i = 0; i < 30; ++i) in.push_back({"text", structured_text(50000 + i * 60000, i + 1)});
  for (unsigned i = 0; i < 30; ++i) in.push_back({"floats", float_like(30000 + i * 70000, i)});
  for (unsigned i = 0; i < 10; ++i) {
    auto block = testing::lcg_bytes(1024 + i * 4096, i);
    std::vector<std::byte> repeated;
    while (repeated.size() < 1500000) repeated.insert(repeated.end(), block.begin(), block.end());
    in.push_back({"repeated-block", std::move(repeated)});
  }
  for (unsigned i = 0; i < 10; ++i) {
    auto low = testing::lcg_bytes(400000 + i * 100000, i + 40);
    for (auto& b : low) b &= std::byte{3};
    in.push_back({"low-entropy", std::move(low)});
  }
  auto half = testing::lcg_bytes(10 << 20, 99);
  auto twice = half;
  twice.insert(twice.end(), half.begin(), half.end());
  in.push_back({"repeated-half", std::move(twice)});
  in.push_back({"large-multi-xorb", testing::lcg_bytes(70 << 20, 70)});
  return in;
}

// hf_xet's local store writes each xorb with its footer: the chunk hashes and the cumulative
// uncompressed end offsets sit after the records (layout in docs/xet.md "Xorbs").
struct StoredXorb {
  std::vector<Hash> chunk_hashes;
  std::vector<std::uint32_t> chunk_sizes;
  std::size_t records_size = 0;
};

std::uint32_t u32_at(const std::string& b, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}

StoredXorb read_footer(const std::string& b) {
  StoredXorb x;
  const std::size_t info = u32_at(b, b.size() - 4);
  const std::size_t start = b.size() - 4 - info;
  EXPECT_EQ(b.compare(start, 7, "XETBLOB"), 0);
  x.records_size = start;
  std::size_t at = start + 8 + 32;
  EXPECT_EQ(b.compare(at, 7, "XBLBHSH"), 0);
  const std::uint32_t n = u32_at(b, at + 8);
  at += 12;
  for (std::uint32_t i = 0; i < n; ++i, at += 32) {
    Hash h;
    std::memcpy(h.bytes.data(), b.data() + at, 32);
    x.chunk_hashes.push_back(h);
  }
  EXPECT_EQ(b.compare(at, 7, "XBLBBND"), 0);
  at += 12 + 4 * n;  // past the record boundaries to the uncompressed ones
  std::uint32_t previous = 0;
  for (std::uint32_t i = 0; i < n; ++i, at += 4) {
    const std::uint32_t end = u32_at(b, at);
    x.chunk_sizes.push_back(end - previous);
    previous = end;
  }
  return x;
}

std::string read_all(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::span<const std::byte> as_span(const std::string& s) { return std::as_bytes(std::span(s)); }

class XetDifferential : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!khub::testing::python_has("hf_xet")) GTEST_SKIP() << "hf_xet not importable";
    dir_ = fs::temp_directory_path() / ("khub-xet-diff-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(XetDifferential, ChunksHashesXorbsAndShardsEqualHfXet) {
  const auto inputs = generate_inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    std::ofstream(dir_ / "in" / std::to_string(i), std::ios::binary)
        .write(reinterpret_cast<const char*>(inputs[i].bytes.data()), static_cast<std::streamsize>(inputs[i].bytes.size()));

  // Odd inputs go through hf_xet's default compression (LZ4 / byte grouping chosen per block),
  // even ones raw, so khub reads both kinds of records written by another implementation.
  auto r = khub::testing::run_python(
      "import hf_xet, json, os, sys\n"
      "os.environ['HF_XET_CACHE'] = '" + (dir_ / "cache").string() + "'\n"
      "root = '" + dir_.string() + "'\n"
      "def session(policy):\n"
      "  return hf_xet.XetSession(config=hf_xet.XetConfig().with_config({'xorb.compression_policy': policy, 'telemetry.enabled': False}))\n"
      "sessions = [session('none'), session('auto')]\n"
      "for i in range(" + std::to_string(inputs.size()) + "):\n"
      "  with sessions[i % 2].new_upload_commit(endpoint='local://' + root + '/store/' + str(i)) as c:\n"
      "    h = c.start_upload_file(root + '/in/' + str(i), sha256=hf_xet.COMPUTE_SHA256)\n"
      "  info = h.result().xet_info\n"
      "  print(json.dumps({'hash': info.hash, 'sha256': info.sha256, 'size': info.file_size}))\n");
  ASSERT_EQ(r.status, 0) << r.output;
  std::istringstream lines(r.output);
  std::size_t cases = 0, chunks_compared = 0, xorbs_compared = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << "hf_xet stopped before input " << i;
    const auto oracle = nlohmann::json::parse(line);
    const auto& data = inputs[i].bytes;
    SCOPED_TRACE("input " + std::to_string(i) + " (" + inputs[i].kind + ", " + std::to_string(data.size()) + " bytes)");

    // khub's view of the file.
    std::vector<HashedSize> mine;
    std::size_t at = 0;
    for (std::size_t n : chunk_lengths(data)) {
      mine.push_back({chunk_hash(std::span(data).subspan(at, n)), n});
      at += n;
    }
    EXPECT_EQ(file_hash(mine).str(), oracle["hash"].get<std::string>());
    // hf_xet reports (and stores in shards) an all-zero sha256 for an empty file.
    const std::string sha = data.empty() ? std::string(64, '0')
                                         : sha256_hex(std::string_view(reinterpret_cast<const char*>(data.data()), data.size()));
    EXPECT_EQ(sha, oracle["sha256"].get<std::string>());

    // hf_xet's xorbs: khub reads their records and names them as hf_xet did.
    const fs::path store = dir_ / "store" / std::to_string(i) / "xet" / "xorbs";
    std::map<Hash, StoredXorb> xorbs;
    if (fs::exists(store / "xorbs"))
      for (const auto& e : fs::directory_iterator(store / "xorbs")) {
        const std::string name = e.path().filename().string();
        if (name.rfind("default.", 0) != 0 || name.ends_with(".tagset")) continue;
        const auto named = parse_hash(name.substr(8));
        ASSERT_TRUE(named) << name;
        const std::string body = read_all(e.path());
        StoredXorb x = read_footer(body);
        auto index = index_xorb(as_span(body));
        ASSERT_TRUE(index) << index.error().message;
        EXPECT_EQ(index->hash, *named);
        EXPECT_EQ(index->records_size, x.records_size);
        ASSERT_EQ(index->chunks.size(), x.chunk_hashes.size());
        std::vector<HashedSize> leaves;
        for (std::size_t c = 0; c < x.chunk_hashes.size(); ++c) {
          EXPECT_EQ(index->chunks[c].hash, x.chunk_hashes[c]);
          EXPECT_EQ(index->chunks[c].unpacked_size, x.chunk_sizes[c]);
          leaves.push_back({x.chunk_hashes[c], x.chunk_sizes[c]});
        }
        EXPECT_EQ(xorb_hash(leaves), *named);
        xorbs.emplace(*named, std::move(x));
        ++xorbs_compared;
      }

    // hf_xet's shards: the file's terms, read by khub, spell out khub's chunk sequence.
    std::optional<FileInfo> file;
    if (fs::exists(store / "shards"))
      for (const auto& e : fs::directory_iterator(store / "shards")) {
        if (e.path().extension() != ".mdb") continue;
        const std::string body = read_all(e.path());
        auto shard = read_shard(as_span(body));
        ASSERT_TRUE(shard) << e.path() << ": " << shard.error().message;
        for (auto& f : shard->files)
          if (f.file_hash.str() == oracle["hash"].get<std::string>()) file = f;
      }
    if (data.empty()) {
      EXPECT_TRUE(mine.empty());
      ++cases;
      continue;
    }
    ASSERT_TRUE(file) << "no shard of hf_xet's names the file";
    ASSERT_TRUE(file->sha256);
    EXPECT_EQ(file->sha256->str(), oracle["sha256"].get<std::string>());
    std::vector<HashedSize> theirs;
    for (const auto& t : file->terms) {
      ASSERT_TRUE(xorbs.count(t.xorb)) << "term names a xorb not in the store";
      const auto& x = xorbs.at(t.xorb);
      ASSERT_LE(t.chunk_end, x.chunk_hashes.size());
      std::vector<Hash> term_hashes;
      std::uint64_t bytes = 0;
      for (auto c = t.chunk_start; c < t.chunk_end; ++c) {
        theirs.push_back({x.chunk_hashes[c], x.chunk_sizes[c]});
        term_hashes.push_back(x.chunk_hashes[c]);
        bytes += x.chunk_sizes[c];
      }
      EXPECT_EQ(bytes, t.unpacked_bytes);
      if (file->has_verification) {
        EXPECT_EQ(verification_hash(term_hashes), t.verification);
      }
    }
    ASSERT_EQ(theirs.size(), mine.size()) << "chunk count";
    for (std::size_t c = 0; c < mine.size(); ++c) {
      ASSERT_EQ(theirs[c].size, mine[c].size) << "chunk " << c << " boundary";
      ASSERT_EQ(theirs[c].hash, mine[c].hash) << "chunk " << c << " hash";
    }
    chunks_compared += mine.size();
    ++cases;
  }
  EXPECT_EQ(cases, inputs.size());
  std::cout << "[ xet differential ] " << cases << " inputs, " << chunks_compared << " chunks, " << xorbs_compared
            << " xorbs equal hf_xet's\n";
}

}  // namespace
}  // namespace khub::xet
