#pragma once
// The Hugging Face environment as huggingface_hub reads it, shared by the client and the publisher:
// HF_HOME and the token. (ClientOptions::from_environment reads the rest for the client.)
#include <filesystem>
#include <string>

namespace khub {

/// The variable's value, "" when unset.
[[nodiscard]] std::string env_value(const char* name);
/// A leading '~' and $VAR / ${VAR} expanded, like Python's expanduser + expandvars (unknown
/// variables stay as written).
[[nodiscard]] std::string expand_user_and_vars(std::string value);
/// HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface.
[[nodiscard]] std::filesystem::path hf_home();
/// HF_TOKEN, HUGGING_FACE_HUB_TOKEN, then the first line of HF_TOKEN_PATH or $HF_HOME/token, white
/// space trimmed; "" when none.
[[nodiscard]] std::string hf_token_from_environment();

/// Certificate authorities trusted instead of the system's, as huggingface_hub (httpx) and hf_xet
/// read them: SSL_CERT_FILE (a PEM bundle), else SSL_CERT_DIR (a hashed directory). Both empty:
/// the system's.
struct TrustedCas {
  std::filesystem::path file;
  std::filesystem::path dir;
};
[[nodiscard]] TrustedCas trusted_cas_from_environment();

}  // namespace khub
