#pragma once
// Limits a libcurl handle to http and https, for the request and any redirect: a hostile Hub or CDN
// must not turn a download into a file://, gopher:// or other protocol request (header-only, for
// the targets that link libcurl: the hub client and the publisher's transport).
#include <curl/curl.h>

namespace khub {

inline void restrict_to_http(CURL* easy) {
#if LIBCURL_VERSION_NUM >= 0x075500  // 7.85: the string forms; the bitmask ones are deprecated there
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
}

}  // namespace khub
