#include "khub/variants/candidates.h"

#include "khub/variants/resolve.h"

namespace khub::variants {

std::vector<std::string> default_candidates(const HostInfo& host) {
  std::vector<Version> torches;
  if (host.torch) torches.push_back(*host.torch);
  else torches = {{2, 12}, {2, 13}};

  std::vector<std::string> computes{"cpu"};
  if (host.backend.kind != BackendKind::Cpu) computes.push_back(host.backend.token());

  const std::string platform = "-" + host.cpu + "-" + host.os;
  std::vector<std::string> names;
  for (const std::string& compute : computes) names.push_back("torch-stable-abi210-" + compute + platform);
  for (const Version& torch : torches) {
    for (const std::string& compute : computes) {
      std::string framework = "torch" + std::to_string(torch.major) + std::to_string(torch.minor);
      if (host.os == "linux") framework += "-cxx11";
      names.push_back(framework + "-" + compute + platform);
    }
  }
  for (const std::string& compute : computes) names.push_back("tvm-ffi01-" + compute + platform);
  names.push_back("torch-cpu");
  if (host.backend.kind != BackendKind::Cpu) names.push_back("torch-" + std::string(noarch_backend_name(host.backend)));
  return names;
}

}  // namespace khub::variants
