#pragma once
// Downloads of files the Hub stores with Xet (docs/xet.md "Download"): token, reconstruction, parallel
// range reads of xorbs, every chunk hashed into the file's Xet hash, then the sha256 as for LFS.
#include <filesystem>
#include <string_view>

#include "client_impl.h"

namespace khub::hub {

/// Whether `meta` names a Xet file khub can fetch through the CAS (a Xet hash, a token route, a
/// sha256 etag and content).
[[nodiscard]] bool is_xet_download(const FileMetadata& meta);

/// Writes the file into `dest` (created or truncated). On error `dest` is left empty, so the caller
/// can fall back to the Hub's whole-file URL.
[[nodiscard]] Status download_xet(HubClient::Impl& impl, const FileMetadata& meta, const std::filesystem::path& dest,
                                  std::string_view display_path);

}  // namespace khub::hub
