#pragma once
// Git object ids for the local hub: tree ids of every directory of a file list, commit ids, LFS
// pointer texts, and the repo path rules every write and read goes through.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "khub/localhub/store.h"

namespace khub::localhub {

/// The LFS pointer text git stores in place of an LFS file.
[[nodiscard]] std::string lfs_pointer(std::string_view sha256, std::uint64_t size);

/// Git tree id of every directory of `files` ("" is the root; an empty list gives the empty tree).
[[nodiscard]] std::map<std::string, std::string> directory_oids(const std::vector<FileEntry>& files);

/// Git commit id of a commit object with these fields.
[[nodiscard]] std::string commit_oid(std::string_view tree, std::string_view parent, std::string_view summary,
                                     std::string_view description, std::int64_t when);

/// Empty when `path` is a valid repo file path; otherwise why not. Rejects empty, absolute, `..`,
/// `.`, empty segments, `.git`, a leading `..\`, NUL and control characters, and > 1024 bytes.
/// Other backslashes are ordinary characters.
[[nodiscard]] std::string check_repo_path(std::string_view path);

}  // namespace khub::localhub
