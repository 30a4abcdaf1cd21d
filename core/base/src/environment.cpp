#include "khub/base/environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>

#include "khub/base/text.h"

namespace khub {
namespace fs = std::filesystem;
std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string expand_user_and_vars(std::string value) {
  if (!value.empty() && value[0] == '~') value = env_value("HOME") + value.substr(1);
  std::string out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '$') {
      out.push_back(value[i]);
      continue;
    }
    std::size_t j = i + 1;
    bool brace = j < value.size() && value[j] == '{';
    if (brace) ++j;
    std::size_t k = j;
    while (k < value.size() && (std::isalnum(static_cast<unsigned char>(value[k])) || value[k] == '_')) ++k;
    if (k == j || (brace && (k >= value.size() || value[k] != '}'))) {
      out.push_back('$');
      continue;
    }
    std::string name = value.substr(j, k - j);
    const char* v = std::getenv(name.c_str());
    if (v) out += v;
    else out += value.substr(i, (brace ? k + 1 : k) - i);
    i = brace ? k : k - 1;
  }
  return out;
}

fs::path hf_home() {
  if (auto v = env_value("HF_HOME"); !v.empty()) return expand_user_and_vars(v);
  if (auto v = env_value("XDG_CACHE_HOME"); !v.empty()) return fs::path(expand_user_and_vars(v)) / "huggingface";
  return fs::path(env_value("HOME")) / ".cache" / "huggingface";
}

std::string hf_token_from_environment() {
  for (const char* name : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"})
    if (auto v = trim_space(env_value(name)); !v.empty()) return v;
  const std::string path = env_value("HF_TOKEN_PATH");
  std::ifstream in(path.empty() ? hf_home() / "token" : fs::path(expand_user_and_vars(path)));
  std::string line;
  if (in && std::getline(in, line)) return trim_space(line);
  return {};
}

TrustedCas trusted_cas_from_environment() {
  if (auto file = env_value("SSL_CERT_FILE"); !file.empty()) return {file, {}};
  return {{}, env_value("SSL_CERT_DIR")};
}

}  // namespace khub
