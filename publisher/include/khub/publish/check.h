#pragma once
// `khub check`: everything `khub push` verifies before any network call (its pre-flight): variant
// names parse, metadata.json parses with the required keys, one version across
// variants, metadata.id == native module stem == registered op namespace, digest recomputed, and
// the ABI rules for every Linux ELF module.
#include <string>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/hash.h"
#include "khub/publish/build_tree.h"

namespace khub::publish {

enum class Severity { Error, Warning };

struct Finding {
  std::string file;   // relative to the variants dir, e.g. `torch212-…/metadata.json`; "" for the build
  std::string check;  // variant-name, metadata, version, python-depends, layout, namespace, digest,
                      // manylinux, abi3, libraries, torch-stable-abi, elf, provenance
  std::string message;
  Severity severity = Severity::Error;
};

struct CheckOptions {
  std::string manylinux = "manylinux_2_28";
  int python_abi_major = 3;
  int python_abi_minor = 9;
  bool abi = true;  // run the ELF checks
  /// Whether the digest check may reuse hashes this process remembers (khub push: its plan and
  /// its Xet scan then reuse the check's sha256 of each file instead of reading it again).
  HashReuse digest_hashes = HashReuse::Never;
  /// khub push: large files written before their variant's metadata.json are taken at their digest
  /// entry unread; the push confirms each as it reads it for the upload (src/digest_claims.h).
  bool digest_claims = false;
};

struct CheckReport {
  std::vector<std::string> variants;       // names checked
  std::vector<std::string> files_checked;  // ELF modules examined, relative
  std::vector<Finding> findings;           // in variant order, then check order
  [[nodiscard]] bool ok() const;           // no Error findings
  [[nodiscard]] std::size_t error_count() const;
};

/// Runs every check over every variant and collects findings; it does not stop at the first.
/// Returns an Error only for an unsupported option (manylinux policy).
[[nodiscard]] Expected<CheckReport> check_build(const BuildTree& tree, const CheckOptions& options = {});

/// Turns a failed report into one AbiViolation / InvalidMetadata / Integrity error whose notes list
/// the first error findings (`<file>: <message>`, then how many more), for callers that only need
/// pass/fail (khub push). `dir` names the build in the hints (`khub check DIR`, `khub hash DIR`).
[[nodiscard]] Status require_clean(const CheckReport& report, const std::filesystem::path& dir = {});

}  // namespace khub::publish
