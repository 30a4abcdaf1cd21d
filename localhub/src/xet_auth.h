#pragma once
// Authorisation of the Xet CAS routes (docs/localhub.md "Xet"). The CAS never sees Hub tokens:
// `xet-read-token` / `xet-write-token` mint an expiring access token for one repo, an HMAC with the
// server's URL-signing key, and the CAS checks it. Fetch URLs in reconstruction answers carry
// their own signature over one byte range of one xorb, as LFS blob URLs do.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http_util.h"
#include "khub/xet/hash.h"

namespace khub::localhub {

enum class XetAccess { Read, Write };  // write includes read

struct XetToken {
  std::string token;
  std::int64_t expires = 0;  // unix seconds
};

/// A token for `repo`, valid for hub.xet_token_seconds.
[[nodiscard]] XetToken mint_xet_token(const Hub& hub, const RepoRecord& repo, XetAccess access);

/// Checks the request's `Authorization: Bearer <Xet token>` and returns the repo it was minted for.
/// Otherwise sends 401 (no token, not ours, expired, repo deleted) or 403 (read token for a write)
/// and returns nullopt. Reads nothing of the body.
[[nodiscard]] std::optional<RepoRecord> require_xet_access(const Hub& hub, const httplib::Request& req,
                                                           httplib::Response& res, XetAccess need);

/// Lifetime of a fetch URL; a client that gets 403 asks for the reconstruction again.
inline constexpr std::int64_t kFetchUrlSeconds = 3600;

/// An absolute URL that serves bytes [first, last] of a xorb's records to anyone holding it.
[[nodiscard]] std::string xorb_fetch_url(const Hub& hub, const httplib::Request& req, const xet::Hash& xorb,
                                         std::uint64_t first, std::uint64_t last);

struct SignedRange {
  std::uint64_t first = 0, last = 0;  // inclusive
};

/// The byte range a fetch URL request for `xorb` was signed for; nullopt when its signature is
/// wrong or it expired.
[[nodiscard]] std::optional<SignedRange> check_fetch_url(const Hub& hub, const httplib::Request& req,
                                                         std::string_view xorb);

}  // namespace khub::localhub
