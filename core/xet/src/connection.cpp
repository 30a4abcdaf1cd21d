#include "khub/xet/connection.h"

#include <charconv>

#include "khub/base/url.h"
#include "khub/json/fields.h"

namespace khub::xet {

Expected<CasConnection> parse_cas_connection(std::string_view body, std::string_view header_cas_url,
                                             std::string_view header_token, std::string_view header_expiration) {
  CasConnection c;
  const auto j = json_fields::parse_untrusted(body, 4);
  if (j.is_object()) {
    c.cas_url = json_fields::text(j, "casUrl");
    c.access_token = json_fields::text(j, "accessToken");
    if (const auto& exp = json_fields::field(j, "exp"); exp.is_number_unsigned()) c.expires = exp.get<std::uint64_t>();
  }
  if (c.cas_url.empty() || c.access_token.empty() || c.expires == 0) {
    c.cas_url = std::string(header_cas_url);
    c.access_token = std::string(header_token);
    c.expires = 0;
    std::from_chars(header_expiration.data(), header_expiration.data() + header_expiration.size(), c.expires);
  }
  if (c.cas_url.empty() || c.access_token.empty() || c.expires == 0)
    return Error(ErrorCode::Protocol, "the Hub's Xet token answer has no CAS URL, token or expiry");
  if (!is_http_url(c.cas_url))
    return Error(ErrorCode::Protocol, "the Hub's Xet token answer names a CAS that is not an http(s) URL");
  while (!c.cas_url.empty() && c.cas_url.back() == '/') c.cas_url.pop_back();
  return c;
}

}  // namespace khub::xet
