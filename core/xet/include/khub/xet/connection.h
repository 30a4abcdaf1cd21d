#pragma once
// What a Hub's xet-read-token / xet-write-token answer grants (docs/xet.md "Tokens"): a CAS URL and a
// short-lived token for it. The Hub sends it twice, as JSON (read by hf_xet) and as headers (read by
// huggingface_hub); khub reads the JSON and falls back to the headers.
#include <cstdint>
#include <string>
#include <string_view>

#include "khub/base/error.h"

namespace khub::xet {

struct CasConnection {
  std::string cas_url;       // absolute http(s) URL, no trailing '/'
  std::string access_token;  // sent only to cas_url, as "Authorization: Bearer <token>"
  std::uint64_t expires = 0; // unix seconds

  /// Whether the token should be refreshed before a request at `now` (30 s early, as hf_xet).
  [[nodiscard]] bool expiring(std::uint64_t now) const { return now + 30 >= expires; }
};

/// Reads a token answer: the JSON body {"accessToken","exp","casUrl"}, else the headers
/// X-Xet-Cas-Url / X-Xet-Access-Token / X-Xet-Token-Expiration. Protocol when neither is complete or
/// the CAS URL is not http(s).
[[nodiscard]] Expected<CasConnection> parse_cas_connection(std::string_view body, std::string_view header_cas_url,
                                                           std::string_view header_token,
                                                           std::string_view header_expiration);

}  // namespace khub::xet
