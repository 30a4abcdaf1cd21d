#pragma once
// The Xet CAS calls of an upload (docs/publishing.md "Xet uploads"), over the shared transport. The
// CAS gets only the short-lived Xet token (never the Hub token), renewed through the Hub 30 s before
// it expires; fetch URLs carry their own authorisation and get none. Safe to call from several
// threads at once (xorbs go up in parallel).
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "khub/base/error.h"
#include "khub/http/retry.h"
#include "khub/http/transport.h"
#include "khub/xet/connection.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/shard.h"
#include "khub/xet/upload.h"

namespace khub::publish::detail {

class CasSession {
 public:
  /// Asks the Hub for a fresh token (the xet-write-token call).
  using Renew = std::function<Expected<xet::CasConnection>()>;
  CasSession(http::Transport& transport, xet::CasConnection connection, Renew renew, http::RetryPolicy retry,
             http::RetryNotice notice);

  /// GET /v1/chunks/default/{chunk}: the shard of xorbs that hold the chunk, nothing when the CAS
  /// does not know it (or offers no global dedup).
  [[nodiscard]] Expected<std::optional<xet::Shard>> find_chunk(const xet::Hash& chunk);
  /// GET /v1/reconstructions/{file} for all `size` (> 0) bytes: how a stored file is made; nothing
  /// when the CAS lacks it.
  [[nodiscard]] Expected<std::optional<xet::Reconstruction>> reconstruction(const xet::Hash& file, std::uint64_t size);
  /// GET of a fetch URL for its byte range: the records of chunks [chunk_start, chunk_end).
  [[nodiscard]] Expected<std::string> fetch(const xet::FetchInfo& where);
  /// POST /v1/xorbs/default/{xorb} with its serialized records; true when the CAS stored it,
  /// false when it had it already.
  /// `records` is sent as it lies, not copied.
  [[nodiscard]] Expected<bool> upload_xorb(const xet::Hash& xorb, std::span<const std::byte> records);
  /// POST /v1/shards, after every xorb it names is stored.
  [[nodiscard]] Status upload_shard(const std::string& shard);

 private:
  // Completes the CAS URL and the token in `request` and sends it (its body is not copied).
  Expected<http::Response> send(http::Request& request);
  Expected<xet::CasConnection> current();

  http::Transport& transport_;
  std::mutex mutex_;  // guards connection_ across the upload threads
  xet::CasConnection connection_;
  Renew renew_;
  http::RetryPolicy retry_;
  http::RetryNotice notice_;
};

}  // namespace khub::publish::detail
