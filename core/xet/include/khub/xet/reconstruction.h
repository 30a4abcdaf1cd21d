#pragma once
// The CAS's answer to "how is this file made" (docs/xet.md "Reconstruction"): terms in file order,
// each a chunk range of a xorb, and per xorb the URLs and byte ranges to fetch them from. The
// server builds it, the client reads it; one JSON shape for both (version 1 of the API).
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"
#include "khub/xet/hash.h"

namespace khub::xet {

struct ReconstructionTerm {
  Hash xorb;
  std::uint32_t unpacked_length = 0;  // content bytes of chunks [chunk_start, chunk_end)
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0;
};

/// Where chunks [chunk_start, chunk_end) of a xorb can be fetched: GET `url` with
/// `Range: bytes=byte_start-byte_end` (inclusive end) gives their whole records.
struct FetchInfo {
  std::uint32_t chunk_start = 0;
  std::uint32_t chunk_end = 0;
  std::string url;
  std::uint64_t byte_start = 0;
  std::uint64_t byte_end = 0;
};

struct Reconstruction {
  std::uint64_t offset_into_first_range = 0;  // content bytes of the first term before the range asked
  std::vector<ReconstructionTerm> terms;
  std::map<Hash, std::vector<FetchInfo>> fetch_info;
};

[[nodiscard]] std::string to_json(const Reconstruction& r);
/// Reads an untrusted answer: JSON depth and size bounded by the caller's body limit, every hash
/// and range checked (start < end; a fetch entry for every term's xorb covering its chunks).
[[nodiscard]] Expected<Reconstruction> parse_reconstruction(std::string_view json);

}  // namespace khub::xet
