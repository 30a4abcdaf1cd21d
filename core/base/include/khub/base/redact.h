#pragma once
// Text that may reach a log or an error message passes through redact(): Hub tokens and signed
// URL query values are replaced, so no secret is ever printed.
#include <string>
#include <string_view>

namespace khub {

/// Replaces `hf_…` tokens and `Bearer …` values with `***`, the user and password of a URL
/// (`http://user:pass@host` → `http://***@host`), and the value of every query parameter of a URL
/// whose name looks secret (signature, token, credential, key, policy, expires…) with `***`.
[[nodiscard]] std::string redact(std::string_view text);

/// Text a server sent, safe for a terminal: at most `max_chars` bytes, every control character
/// (line breaks, ESC sequences, DEL) a space.
[[nodiscard]] std::string one_printable_line(std::string_view text, std::size_t max_chars = 200);

/// A server's response body as one line for an error message: at most 200 characters, line breaks
/// as spaces, redacted; an HTML page (a web server or proxy that is no Hub) is named as such
/// instead of being printed.
[[nodiscard]] std::string server_text_line(std::string_view body);

}  // namespace khub
