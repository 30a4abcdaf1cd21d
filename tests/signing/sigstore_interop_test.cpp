// Oracle: sigstore-python (with kernels' GitHub-workflow policy) must agree with khub's keyless
// verifier on every case of a synthetic Sigstore instance (sigstore_fixture.py: real CA chain, CT
// log, Rekor log and signatures), good bundles and each kind of forgery alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "khub/base/fs.h"
#include "khub/signing/signature.h"
#include "khub/signing/sigstore.h"
#include "../protocol/python_oracle.h"

namespace khub::signing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  auto text = read_file(p);
  return text ? *text : std::string();
}

class SigstoreOracle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("khub-sigstore-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    const std::string cmd = std::string("\"") + KHUB_PYTHON + "\" " + KHUB_SOURCE_DIR +
                            "/tests/signing/sigstore_fixture.py " + dir_.string() + " >/dev/null";
    generated_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  void SetUp() override { ASSERT_TRUE(generated_) << "sigstore_fixture.py failed (needs sigstore and kernels in the venv)"; }

  static SigstoreTrustRoot root(const std::string& file = "trusted_root.json") {
    auto r = SigstoreTrustRoot::load(dir_ / file);
    EXPECT_TRUE(r) << r.error().describe();
    return std::move(r).value();
  }
  static nlohmann::json cases() { return nlohmann::json::parse(slurp(dir_ / "cases.json")); }
  static GitHubWorkflowIdentity identity(const nlohmann::json& c) {
    return {c["identity"]["repository"], c["identity"]["signer_uris"].get<std::vector<std::string>>()};
  }
  static inline fs::path dir_;
  static inline bool generated_ = false;
};

TEST_F(SigstoreOracle, EveryCaseAgreesWithSigstorePython) {
  const auto all = cases();
  ASSERT_GE(all.size(), 32u);
  int good = 0;
  for (const auto& c : all) {
    const fs::path d = dir_ / c["name"].get<std::string>();
    const auto trust = root(c.value("root", "trusted_root.json"));
    auto st = verify_keyless_bundle(slurp(d / "metadata.json"), slurp(d / "metadata.json.sigstore"), trust, {identity(c)});
    const bool oracle_ok = c["oracle"] == "ok";
    EXPECT_EQ(static_cast<bool>(st), oracle_ok)
        << c["name"] << ": sigstore-python says " << c["oracle"] << " (" << c["reason"].get<std::string>()
        << "), khub says " << (st ? std::string("ok") : st.error().describe());
    // A bundle sigstore-python cannot even load is InvalidMetadata here; a failed check is Signature.
    if (!st && c["reason"].get<std::string>().starts_with("bundle must contain")) {
      EXPECT_EQ(st.error().code, ErrorCode::InvalidMetadata) << c["name"] << ": " << st.error().describe();
    } else if (!st) {
      EXPECT_EQ(st.error().code, ErrorCode::Signature) << c["name"] << ": " << st.error().describe();
    }
    good += oracle_ok;
  }
  // Good: two plain bundles, four with timestamps (one valid; a bad signature, another imprint
  // and another signer dropped as sigstore-python drops them) and a Rekor v2 one; the rest are
  // forgeries.
  EXPECT_EQ(good, 7);
}

// Each failure names its step (what a user reads in the one-line error).
TEST_F(SigstoreOracle, FailuresNameTheirStep) {
  const auto trust = root();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"untrusted_chain", "does not chain to a trusted Fulcio CA"},
      {"expired_at_signing", "does not chain to a trusted Fulcio CA"},
      {"no_sct", "no signed certificate timestamp"},
      {"bad_sct", "SCT signature does not verify"},
      {"wrong_repository", "not a trusted workflow"},
      {"wrong_workflow", "not a trusted workflow"},
      {"wrong_issuer", "not GitHub Actions"},
      {"no_code_signing_eku", "code signing"},
      {"no_eku_extension", "code signing"},
      {"no_key_usage_extension", "key usage is not digital signature"},
      {"bad_inclusion_proof", "inclusion proof does not lead to its root hash"},
      {"bad_checkpoint", "checkpoint signature does not verify"},
      {"wrong_root_hash", "checkpoint's root hash is not the inclusion proof's"},
      {"bad_set", "signed entry timestamp does not verify"},
      {"tampered_metadata", "message digest mismatch"},
      {"digest_mismatch", "message digest mismatch"},
      {"body_mismatch", "inconsistent with the bundle"},
      {"tsa_after_cert_expiry", "does not chain to a trusted Fulcio CA"},
      {"tsa_duplicate", "duplicate RFC 3161 timestamp"},
      {"tsa_too_many", "too many signed timestamps (33 > 32)"},
      {"v2_no_timestamp", "must contain an inclusion promise or signed timestamp"},
      {"v2_bad_checkpoint", "checkpoint signature does not verify"},
      {"v2_body_mismatch", "inconsistent with the bundle (digest)"},
      {"v2_wrong_key_details", "inconsistent with the bundle (key details)"},
  };
  const auto all = cases();
  for (const auto& [name, text] : expected) {
    const fs::path d = dir_ / name;
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c["name"] == name; });
    ASSERT_NE(it, all.end()) << name;
    auto st = verify_keyless_bundle(slurp(d / "metadata.json"), slurp(d / "metadata.json.sigstore"), trust,
                                    {identity(*it)});
    ASSERT_FALSE(st) << name;
    EXPECT_NE(st.error().message.find(text), std::string::npos) << name << ": " << st.error().message;
  }
}

// A hostile Hub's bundle: every field of a good bundle given every other JSON type. Nothing throws
// (an exception would escape get_kernel), and only the optional fields' absence keeps it valid.
TEST_F(SigstoreOracle, HostileFieldTypesAreRefusedNotThrown) {
  using J = nlohmann::json;
  const auto trust = root();
  const auto ids = kernels_community_identities();
  std::set<std::string> accepted;
  for (const char* name : {"good", "tsa_good", "v2_good"}) {
    const fs::path d = dir_ / name;
    const std::string meta = slurp(d / "metadata.json");
    const J doc = J::parse(slurp(d / "metadata.json.sigstore"));
    std::set<std::string> pointers;
    const J flat = doc.flatten();  // kept alive: items() refers into it
    for (const auto& [ptr, value] : flat.items()) {
      for (std::string p = ptr; !p.empty(); p = p.substr(0, p.rfind('/'))) pointers.insert(p);
    }
    for (const auto& ptr : pointers) {
      for (const J& other : {J(1), J(-1), J("x"), J::array(), J::array({1, 2}), J::object(), J(nullptr), J(true)}) {
        J mutated = doc;
        mutated[J::json_pointer(ptr)] = other;
        const std::string text = mutated.dump();
        Status st;
        ASSERT_NO_THROW(st = verify_keyless_bundle(meta, text, trust, ids)) << name << " " << ptr << " = " << other;
        ASSERT_NO_THROW((void)parse_signature_bundle(text)) << name << " " << ptr << " = " << other;
        if (st) accepted.insert(std::string(name) + " " + ptr + " = " + other.dump());
      }
    }
  }
  const std::set<std::string> expected = {
      "good /messageSignature/messageDigest = null", "good /messageSignature/messageDigest/algorithm = null",
      "tsa_good /messageSignature/messageDigest = null", "tsa_good /messageSignature/messageDigest/algorithm = null",
      "tsa_good /verificationMaterial/timestampVerificationData = null",
      "tsa_good /verificationMaterial/timestampVerificationData = {}",
      "tsa_good /verificationMaterial/timestampVerificationData/rfc3161Timestamps = []",
      "tsa_good /verificationMaterial/timestampVerificationData/rfc3161Timestamps = null",
      "tsa_good /verificationMaterial/tlogEntries/0/inclusionPromise = null",  // the timestamp still dates it
      "v2_good /messageSignature/messageDigest = null", "v2_good /messageSignature/messageDigest/algorithm = null",
      "v2_good /verificationMaterial/tlogEntries/0/logIndex = -1",  // only a SET signs the log index
      "v2_good /verificationMaterial/tlogEntries/0/logIndex = 1",
  };
  EXPECT_EQ(accepted, expected);
}

// The public-good root ships with khub; a bundle of another instance does not chain to it.
TEST_F(SigstoreOracle, ProductionRootRefusesAnotherInstance) {
  const fs::path d = dir_ / "good";
  auto st = verify_keyless_bundle(slurp(d / "metadata.json"), slurp(d / "metadata.json.sigstore"),
                                  SigstoreTrustRoot::production(), kernels_community_identities());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("does not chain to a trusted Fulcio CA"), std::string::npos) << st.error().message;
}

// verify_variant_signature takes the keyless path for a certificate bundle, with kernels' outcomes.
TEST_F(SigstoreOracle, VariantCheckUsesTheKeylessPath) {
  const auto trust = root();
  SignatureTrust t;
  t.sigstore_root = &trust;
  EXPECT_EQ(verify_variant_signature(dir_ / "good", t).outcome, SignatureOutcome::Success);
  auto bad = verify_variant_signature(dir_ / "wrong_workflow", t);
  EXPECT_EQ(bad.outcome, SignatureOutcome::SignatureVerificationFailure);
  EXPECT_NE(bad.detail.find("not a trusted workflow"), std::string::npos) << bad.detail;
  t.identities = {{"someone/else", {"https://github.com/someone/else/.github/workflows/b.yaml@refs/heads/main"}}};
  EXPECT_EQ(verify_variant_signature(dir_ / "good", t).outcome, SignatureOutcome::SignatureVerificationFailure);
  // Only keys, no identities: a keyless bundle has nobody to vouch for it.
  t.identities.clear();
  EXPECT_EQ(verify_variant_signature(dir_ / "good", t).outcome, SignatureOutcome::SignatureVerificationFailure);
}

// khub's default identities are kernels' DEFAULT_POLICIES, workflow for workflow.
TEST(SigstoreIdentities, DefaultsAreKernelsDefaultPolicies) {
  auto r = khub::testing::run_python(
      "import json\nfrom kernels.verify import DEFAULT_POLICIES\n"
      "print(json.dumps([[p.repo_id, p.signer_uris] for p in DEFAULT_POLICIES]))\n");
  ASSERT_EQ(r.status, 0) << "kernels.verify not importable from KHUB_PYTHON";
  nlohmann::json expected = nlohmann::json::parse(r.output);
  nlohmann::json ours = nlohmann::json::array();
  for (const auto& id : kernels_community_identities()) ours.push_back({id.repository, id.signer_uris});
  EXPECT_EQ(ours, expected);
}

TEST(SigstoreTrustRoot, ParsesTheShippedRootAndRefusesBadOnes) {
  // production() aborts on a shipped file it cannot parse: reaching the next line is the check.
  (void)SigstoreTrustRoot::production();
  for (const std::string bad : {"", "[]", R"({"mediaType":"application/json"})",
                                R"({"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"})",
                                R"({"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1",
                                    "tlogs":[{"publicKey":{"rawBytes":"AAAA"}}]})"}) {
    auto r = SigstoreTrustRoot::parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(r.error().message.rfind("sigstore trusted root: ", 0), 0u) << r.error().message;
  }
}

}  // namespace
}  // namespace khub::signing
