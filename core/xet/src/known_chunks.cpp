#include "khub/xet/upload.h"

namespace khub::xet {

void KnownChunks::add(const Hash& chunk, const ChunkLocation& where) {
  plain_.insert_or_assign(chunk, where);
  positions_.insert({where.xorb, where.index});
}

void KnownChunks::add_shard(const Shard& shard, std::uint64_t now_unix) {
  // A zero expiry is read as none: shards rebuilt by hf_xet's local store carry 0.
  if (shard.key_expiry != 0 && shard.key_expiry <= now_unix) return;
  auto& table = shard.chunk_hmac_key.is_zero() ? plain_ : keyed_[shard.chunk_hmac_key];
  for (const auto& x : shard.xorbs) {
    for (std::size_t i = 0; i < x.chunks.size(); ++i) {
      const ChunkLocation where{x.xorb, static_cast<std::uint32_t>(i)};
      table.insert_or_assign(x.chunks[i].hash, where);
      positions_.insert({x.xorb, where.index});
    }
  }
}

std::optional<ChunkLocation> KnownChunks::find(const Hash& chunk) const {
  if (auto it = plain_.find(chunk); it != plain_.end()) return it->second;
  for (const auto& [key, table] : keyed_) {
    if (auto it = table.find(keyed_hash(key, chunk)); it != table.end()) return it->second;
  }
  return std::nullopt;
}

bool KnownChunks::holds(const Hash& xorb, std::uint32_t index) const { return positions_.contains({xorb, index}); }

}  // namespace khub::xet
