// Sigstore bundles (metadata.json.sigstore from a Hub repo): parse_signature_bundle, and the keyless
// verifier (verify_keyless_bundle) against the synthetic trust root of tests/signing/sigstore_fixture.py
// (fuzz/data/sigstore_trusted_root.json) and against the production root.
//
// Input: the artifact (metadata.json bytes), a line "-----BUNDLE-----", then the bundle JSON. Without
// that line the whole input is the bundle and the artifact is empty.
#include <fstream>
#include <sstream>

#include "fuzz_util.h"
#include "khub/signing/signature.h"
#include "khub/signing/sigstore.h"

namespace {
const khub::signing::SigstoreTrustRoot* synthetic_root() {
  static const auto root = [] {
    std::ifstream in(std::string(KHUB_FUZZ_DATA) + "/sigstore_trusted_root.json", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto r = khub::signing::SigstoreTrustRoot::parse(ss.str());
    if (!r) khub_fuzz::invariant_failed("fuzz/data/sigstore_trusted_root.json does not parse");
    return std::make_unique<khub::signing::SigstoreTrustRoot>(std::move(*r));
  }();
  return root.get();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace khub::signing;
  auto in = khub_fuzz::text(data, size);
  std::string_view artifact;
  std::string_view bundle = in;
  static constexpr std::string_view kSep = "\n-----BUNDLE-----\n";
  if (auto at = in.find(kSep); at != std::string_view::npos) {
    artifact = in.substr(0, at);
    bundle = in.substr(at + kSep.size());
  }
  auto parsed = parse_signature_bundle(bundle);
  if (parsed) (void)serialize_signature_bundle(*parsed);
  auto st = verify_keyless_bundle(artifact, bundle, *synthetic_root(), kernels_community_identities());
  if (khub_fuzz::verbose()) std::fprintf(stderr, "verify: %s\n", st ? "ok" : st.error().message.c_str());
  (void)verify_keyless_bundle(artifact, bundle, SigstoreTrustRoot::production(), kernels_community_identities());
  return 0;
}
