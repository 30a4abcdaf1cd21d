#pragma once
// Text that may reach a log or an error message passes through redact(): Hub tokens and signed
// URL query values are replaced, so no secret is ever printed.
#include <string>
#include <string_view>

namespace khub {

/// Replaces `hf_…` tokens and `Bearer …` values with `***`, and the value of every query parameter
/// of a URL whose name looks secret (signature, token, credential, key, policy, expires…) with `***`.
[[nodiscard]] std::string redact(std::string_view text);

}  // namespace khub
