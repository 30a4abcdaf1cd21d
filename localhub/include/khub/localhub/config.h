#pragma once
// Server configuration: tokens and their rights, trusted publishers, upload limits and injected
// faults. Read from a JSON file (docs/localhub.md) and/or built from `khub serve` flags.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "khub/base/error.h"

namespace khub::localhub {

struct TokenGrant {
  std::string token;
  std::string user = "khub";
  bool write = false;
  std::vector<std::string> orgs;        // organisations the user belongs to (whoami)
  std::vector<std::string> namespaces;  // where it may read private repos and write; empty = all
  std::string fullname;                 // whoami's "fullname"; empty = the user name
};

enum class FaultAction { DropMidBody, Status, RateLimit, Slow, IgnoreRange, WrongSize, WrongEtag };

/// One injected fault: requests whose "METHOD /path" or "/path" matches `pattern` (fnmatch, `*`
/// crosses `/`) get `action`, for the first `count` matches (-1 = always).
struct FaultRule {
  std::string pattern;
  FaultAction action = FaultAction::Status;
  int status = 500;      // Status
  int seconds = 1;       // RateLimit: t= and Retry-After
  int millis = 0;        // Slow
  int count = -1;
};

/// An organisation's profile: whoami's and the org overview's "fullname", and whether repos created
/// in it without `private`/`visibility` are private (the Hub's Enterprise default).
struct Organization {
  std::string name;
  std::string fullname;  // empty = the name
  bool private_by_default = false;
};

struct ServerConfig {
  std::vector<TokenGrant> tokens;
  std::vector<Organization> organizations;
  std::vector<std::string> trusted_orgs;  // organisations with trustedKernelPublisher: true
  bool anonymous_read = true;             // ignored (always true) when no token is configured
  std::uint64_t lfs_chunk_size = 16ull << 20;      // multipart part size; also the threshold
  std::uint64_t max_regular_file = 10ull << 20;    // larger regular files must be LFS
  std::uint64_t max_commit_body = 256ull << 20;    // NDJSON commit payload
  std::uint64_t max_object_size = 50ull << 30;     // one LFS object
  std::string blob_base_url;  // LFS redirects go here ("{port}" is replaced); empty = request host
  /// Answer regular files of public repos asked by branch/tag with the Hub's 307 to
  /// /api/resolve-cache/… (relative Location) instead of a direct 200.
  bool resolve_cache_redirects = false;
  std::vector<FaultRule> faults;
  /// The profile of organisation `name` (case-insensitive), or nullptr.
  [[nodiscard]] const Organization* find_organization(std::string_view name) const;
};

/// Reads a JSON config file; InvalidArgument naming the key on a bad shape, Io when unreadable.
[[nodiscard]] Expected<ServerConfig> load_config(const std::filesystem::path& file);
/// Parses the JSON text of a config file.
[[nodiscard]] Expected<ServerConfig> parse_config(std::string_view json_text);
/// "TOKEN", "TOKEN:read" or "TOKEN:write" (default write).
[[nodiscard]] Expected<TokenGrant> parse_token_flag(std::string_view flag);
/// "PATTERN=drop-mid-body|500|503|429[:S]|slow:MS|ignore-range|wrong-size|wrong-etag[,count=N]".
[[nodiscard]] Expected<FaultRule> parse_fault(std::string_view spec);

}  // namespace khub::localhub
