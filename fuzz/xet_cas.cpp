// The local hub's Xet CAS (localhub/src/routes_cas.cpp) with a valid write token, through the route
// table against an in-process store (localhub_harness.h). The first byte picks what the rest is:
//   0: a xorb body (POST /v1/xorbs; its name is the hash of the first chunk record, so a valid
//      one-record xorb is stored),
//   1: a shard body (POST /v1/shards, checked against the xorbs earlier inputs stored),
//   2: file content: a valid upload of it is built with khub::xet and sent, then a byte range of it
//      (picked by the next 8 bytes) is rebuilt from the reconstruction answer and its fetch URLs;
//      it must equal the content (an invariant),
//   3: a Range header for a reconstruction, then a query for a fetch URL (after a newline).
#include <cstring>

#include "khub/base/hash.h"
#include "khub/xet/chunker.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/shard.h"
#include "khub/xet/xorb.h"
#include "localhub_harness.h"
#include "xet_auth.h"

namespace {
using namespace khub;

const std::string& write_token() {
  static const std::string token = [] {
    auto& hub = khub_fuzz::local_hub();
    auto repo = hub.store.find_repo(localhub::RepoKey{RepoType::Model, "fuzz", "repo"});
    if (!repo) khub_fuzz::invariant_failed("the fuzz repo is missing");
    return localhub::mint_xet_token(hub, *repo, localhub::XetAccess::Write).token;
  }();
  return token;
}

httplib::Headers bearer(std::size_t length) {
  return {{"Authorization", "Bearer " + write_token()}, {"Content-Length", std::to_string(length)}};
}

std::string as_string(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Uploads `content` as one xorb and a shard; the file's hash, or nullopt when it was refused.
std::optional<xet::Hash> upload(std::string_view content) {
  const auto bytes = std::as_bytes(std::span(content.data(), content.size()));
  xet::XorbWriter writer;
  xet::FileInfo file;
  std::vector<xet::HashedSize> leaves;
  std::vector<xet::Hash> hashes;
  std::size_t at = 0;
  for (std::size_t len : xet::chunk_lengths(bytes)) {
    const auto hash = xet::chunk_hash(bytes.subspan(at, len));
    writer.add(bytes.subspan(at, len), hash);
    leaves.push_back({hash, len});
    hashes.push_back(hash);
    at += len;
  }
  file.file_hash = xet::file_hash(leaves);
  file.has_verification = true;
  file.sha256 = xet::hash_from_sha256_hex(sha256_hex(content));
  if (!writer.empty()) {
    file.terms.push_back({writer.hash(), 0, static_cast<std::uint32_t>(hashes.size()),
                          static_cast<std::uint32_t>(content.size()), xet::verification_hash(hashes)});
    const auto records = as_string(writer.records());
    auto r = khub_fuzz::serve("POST", "/v1/xorbs/default/" + writer.hash().str(), bearer(records.size()), records);
    if (r.status != 200) khub_fuzz::invariant_failed("a valid xorb was refused");
  }
  xet::Shard shard;
  shard.files.push_back(file);
  const auto body = xet::write_shard(shard);
  auto r = khub_fuzz::serve("POST", "/v1/shards", bearer(body.size()), body);
  if (r.status != 200) khub_fuzz::invariant_failed("a valid shard was refused");
  return file.file_hash;
}

// Reads a content provider's bytes as the server would send them.
std::string body_of(httplib::Response& res) {
  if (!res.content_provider_) return res.body;
  std::string out;
  httplib::DataSink sink;
  sink.write = [&](const char* d, std::size_t n) {
    out.append(d, n);
    return true;
  };
  sink.is_writable = [] { return true; };
  for (std::size_t off = 0; off < res.content_length_;) {
    const auto before = out.size();
    if (!res.content_provider_(off, res.content_length_ - off, sink) || out.size() == before) break;
    off += out.size() - before;
  }
  return out;  // the response's destructor releases the provider
}

void rebuild_range(std::string_view content, const xet::Hash& file, std::uint64_t first, std::uint64_t last) {
  auto res = khub_fuzz::serve("GET", "/v1/reconstructions/" + file.str(),
                              {{"Authorization", "Bearer " + write_token()},
                               {"Range", "bytes=" + std::to_string(first) + "-" + std::to_string(last)}},
                              {});
  if (res.status != 200) khub_fuzz::invariant_failed("reconstruction of a stored file failed");
  auto plan = xet::parse_reconstruction(res.body);
  if (!plan) khub_fuzz::invariant_failed("the server's reconstruction answer does not parse");
  std::string got;
  for (const auto& term : plan->terms) {
    const auto& fetch = plan->fetch_info.at(term.xorb).front();
    const auto path = fetch.url.substr(fetch.url.find("/v1/xorb-data/"));
    auto data = khub_fuzz::serve("GET", path,
                                 {{"Range", "bytes=" + std::to_string(fetch.byte_start) + "-" +
                                                std::to_string(fetch.byte_end)}},
                                 {});
    if (data.status != 206) khub_fuzz::invariant_failed("a fetch URL of the answer was refused");
    const auto records = body_of(data);
    auto rest = std::as_bytes(std::span(records.data(), records.size()));
    std::vector<std::byte> chunk;
    for (std::uint32_t c = fetch.chunk_start; c < term.chunk_end; ++c) {
      chunk.clear();
      auto used = xet::decode_record(rest, chunk);
      if (!used) khub_fuzz::invariant_failed("a fetch URL gave bytes that are no records");
      rest = rest.subspan(*used);
      if (c >= term.chunk_start) got += as_string(chunk);
    }
  }
  got.erase(0, plan->offset_into_first_range);
  got.resize(std::min<std::size_t>(got.size(), last - first + 1));
  if (got != content.substr(first, last - first + 1)) khub_fuzz::invariant_failed("a rebuilt range differs from the content");
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto mode = data[0] % 4;
  auto in = khub_fuzz::text(data + 1, size - 1);
  switch (mode) {
    case 0: {
      // Named after the first record's chunk, so a valid one-record xorb gets stored.
      std::vector<std::byte> chunk;
      auto used = xet::decode_record(std::as_bytes(std::span(in.data(), in.size())), chunk);
      const auto name = used ? xet::chunk_hash(chunk).str() : std::string(64, '0');
      (void)khub_fuzz::serve("POST", "/v1/xorbs/default/" + name, bearer(in.size()), in);
      break;
    }
    case 1: (void)khub_fuzz::serve("POST", "/v1/shards", bearer(in.size()), in); break;
    case 2: {
      if (in.size() < 9) return 0;
      std::uint32_t a = 0, b = 0;
      std::memcpy(&a, in.data(), 4);
      std::memcpy(&b, in.data() + 4, 4);
      const auto content = in.substr(8);
      auto file = upload(content);
      if (!file || content.empty()) return 0;
      std::uint64_t first = a % content.size(), last = b % content.size();
      if (first > last) std::swap(first, last);
      rebuild_range(content, *file, first, last);
      break;
    }
    default: {
      const auto range = khub_fuzz::take_line(in);
      (void)khub_fuzz::serve("GET", "/v1/reconstructions/" + std::string(64, '0'),
                             {{"Authorization", "Bearer " + write_token()}, {"Range", std::string(range)}}, {});
      (void)khub_fuzz::serve("GET", "/v1/xorb-data/" + std::string(64, '0') + "?" + std::string(in), {}, {});
    }
  }
  return 0;
}
