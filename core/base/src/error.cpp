#include "khub/base/error.h"

#include <cctype>

namespace khub {

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::InvalidVariant: return "InvalidVariant";
    case ErrorCode::InvalidMetadata: return "InvalidMetadata";
    case ErrorCode::RepoNotFound: return "RepoNotFound";
    case ErrorCode::RevisionNotFound: return "RevisionNotFound";
    case ErrorCode::EntryNotFound: return "EntryNotFound";
    case ErrorCode::GatedRepo: return "GatedRepo";
    case ErrorCode::Unauthorized: return "Unauthorized";
    case ErrorCode::Forbidden: return "Forbidden";
    case ErrorCode::RateLimited: return "RateLimited";
    case ErrorCode::Network: return "Network";
    case ErrorCode::Protocol: return "Protocol";
    case ErrorCode::Conflict: return "Conflict";
    case ErrorCode::Integrity: return "Integrity";
    case ErrorCode::NoVariant: return "NoVariant";
    case ErrorCode::Untrusted: return "Untrusted";
    case ErrorCode::OfflineMiss: return "OfflineMiss";
    case ErrorCode::Io: return "Io";
    case ErrorCode::LoadFailed: return "LoadFailed";
    case ErrorCode::AbiViolation: return "AbiViolation";
    case ErrorCode::Signature: return "Signature";
    case ErrorCode::Cancelled: return "Cancelled";
    case ErrorCode::Unsupported: return "Unsupported";
  }
  return "Unknown";
}

std::string Error::describe() const {
  std::string out = message;  // one line: what was wrong and what to do; details follow
  if (!hint.empty() && message.ends_with('.')) {  // upstream's sentences: a new sentence
    out += " " + hint;
    out[message.size() + 1] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[message.size() + 1])));
  } else if (!hint.empty()) {
    out += "; " + hint;
  }
  for (const auto& n : notes) out += "\n  note: " + n;
  return out;
}

}  // namespace khub
