#pragma once
// The Xet upload of one commit's files (docs/publishing.md "Xet uploads"): scan each file, learn
// which of its chunks the CAS holds, send the rest as xorbs (a few at once), then the shard. The
// commit that names the files is the caller's, made only after this succeeded.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cas_session.h"
#include "khub/publish/upload_plan.h"

namespace khub::publish::detail {

struct XetUploadResult {
  std::uint64_t bytes_sent = 0;          // xorb bodies as sent (compressed records)
  std::uint64_t bytes_deduplicated = 0;  // file content the CAS held already, or sent once for two files
  std::uint64_t bytes_fetched = 0;       // old xorb records read back to learn their chunks
  std::size_t xorbs_sent = 0;
};

struct XetUploadOptions {
  std::size_t parallel = 4;  // files scanned, dedup queries and xorb uploads at once
  std::function<void(std::string_view)> say;
};

/// Uploads `files` (whose sha256 the plan computed: a file that no longer matches fails with
/// Integrity); `replaced` names, per repo path, the Xet-stored version a file replaces, whose
/// chunks are read back through its reconstruction when dedup answers did not cover them.
[[nodiscard]] Expected<XetUploadResult> upload_with_xet(CasSession& cas, const std::vector<const LocalFile*>& files,
                                                        const std::map<std::string, RemoteFile>& replaced,
                                                        const XetUploadOptions& options);

}  // namespace khub::publish::detail
