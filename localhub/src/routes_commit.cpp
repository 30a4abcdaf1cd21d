// POST /api/{type}s/{repo}/commit/{rev}: the NDJSON commit. The body is read line by line;
// inline files go to temp files of the blob store as they arrive, so memory stays bounded by one
// line, and into place together once the whole body has parsed.
#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "routes.h"
#include "tree_hash.h"

namespace khub::localhub {

using nlohmann::json;

namespace {
struct CommitParser {
  Hub& hub;
  CommitRequest request;
  BlobStore::Batch inline_blobs{hub.store.blobs()};  // made durable together before the commit
  bool have_header = false;
  std::size_t line_no = 0;

  Error bad(const std::string& why) const {
    return Error(ErrorCode::InvalidArgument, "malformed NDJSON line " + std::to_string(line_no) + ": " + why);
  }

  Status line(std::string_view text) {
    ++line_no;
    while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    if (text.empty()) return {};
    json j = json_fields::parse_untrusted(text);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    if (!j.contains("key") || !j["key"].is_string() || !j.contains("value") || !j["value"].is_object()) {
      return bad("needs \"key\" (string) and \"value\" (object)");
    }
    auto key = j["key"].get<std::string>();
    const json& v = j["value"];
    if (!have_header) {
      if (key != "header") return bad("the first line must be the header");
      if (!v.contains("summary") || !v["summary"].is_string() || v["summary"].get<std::string>().empty()) {
        return bad("header needs a non-empty summary");
      }
      request.summary = v["summary"].get<std::string>();
      for (const char* field : {"description", "parentCommit"}) {
        if (v.contains(field) && !v[field].is_null() && !v[field].is_string()) return bad(std::string(field) + " must be a string");
      }
      if (v.contains("description") && v["description"].is_string()) request.description = v["description"].get<std::string>();
      if (v.contains("parentCommit") && v["parentCommit"].is_string()) {
        request.parent_commit = v["parentCommit"].get<std::string>();
        if (request.parent_commit.size() != 40 || !is_hex(request.parent_commit)) return bad("parentCommit must be 40 hex");
      }
      have_header = true;
      return {};
    }
    if (!v.contains("path") || !v["path"].is_string()) return bad("\"" + key + "\" needs a path");
    std::string path = v["path"].get<std::string>();
    if (auto why = check_repo_path(key == "deletedFolder" && path.ends_with("/") ? path.substr(0, path.size() - 1) : path);
        !why.empty()) {
      return bad("invalid path '" + path + "': " + why);
    }
    if (key == "file") return add_inline(v, path);
    if (key == "lfsFile") return add_lfs(v, path);
    if (key == "deletedFile") {
      request.ops.push_back(CommitOp{OpKind::DeleteFile, path});
      return {};
    }
    if (key == "deletedFolder") {
      request.ops.push_back(CommitOp{OpKind::DeleteFolder, path});
      return {};
    }
    if (key == "header") return bad("a second header");
    return bad("unknown key \"" + key + "\"");
  }

  Status add_inline(const json& v, const std::string& path) {
    if (v.contains("oldPath") && !v.contains("content")) {
      if (!v["oldPath"].is_string()) return bad("oldPath must be a string");
      CommitOp op{OpKind::RenameFile, path};
      op.from = v["oldPath"].get<std::string>();
      if (auto why = check_repo_path(op.from); !why.empty()) return bad("invalid oldPath '" + op.from + "': " + why);
      request.ops.push_back(std::move(op));
      return {};
    }
    if (!v.contains("content") || !v["content"].is_string()) return bad("file needs a content string");
    if (v.contains("encoding") && !v["encoding"].is_null() && !v["encoding"].is_string()) {
      return bad("encoding must be a string");
    }
    auto encoding = string_field(v, "encoding", "utf-8");
    const auto& content = v["content"].get_ref<const std::string&>();
    std::string bytes;
    if (encoding == "base64") {
      auto decoded = base64_decode(content);
      if (!decoded) return bad("content of " + path + " is not valid base64");
      bytes.assign(decoded->begin(), decoded->end());
    } else if (encoding == "utf-8") {
      bytes = content;
    } else {
      return bad("unknown encoding \"" + encoding + "\"");
    }
    if (bytes.size() > hub.config.max_regular_file) {
      return Error(ErrorCode::InvalidArgument,
                   "Your push was rejected because it contains files larger than 10 MiB. Please use "
                   "https://git-lfs.github.com/ to store large files. Offending file: - " + path);
    }
    KHUB_TRY(auto info, inline_blobs.put(bytes));
    request.ops.push_back(CommitOp{OpKind::AddFile, path, info.sha256, info.size, false});
    return {};
  }

  Status add_lfs(const json& v, const std::string& path) {
    if (v.contains("algo") && (!v["algo"].is_string() || v["algo"] != "sha256")) return bad("lfsFile algo must be sha256");
    if (!v.contains("oid") || !v["oid"].is_string()) return bad("lfsFile needs an oid");
    auto oid = v["oid"].get<std::string>();
    if (oid.size() != 64 || !is_hex(oid)) return bad("lfsFile oid must be 64 hex characters");
    for (auto& c : oid) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::uint64_t size = 0;
    if (v.contains("size")) {
      if (!v["size"].is_number_unsigned()) return bad("lfsFile size must be an integer >= 0");
      size = v["size"].get<std::uint64_t>();
    } else {
      size = hub.store.blobs().size_of(oid).value_or(0);  // copies send no size
    }
    request.ops.push_back(CommitOp{OpKind::AddFile, path, oid, size, true});
    return {};
  }
};
}  // namespace

void post_commit(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key, std::string_view rev) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);
  auto cp = req.get_param_value("create_pr");
  const bool create_pr = cp == "1" || cp == "true";
  if (!repo || !may_commit(hub, who, *repo, rev, create_pr, res)) return;

  CommitParser parser{hub};
  parser.request.author = who.grant ? who.grant->user : "khub";
  parser.request.create_pr = create_pr;
  const std::uint64_t line_limit = hub.config.max_regular_file * 4 / 3 + (1u << 16);
  std::string pending;
  std::uint64_t total = 0;
  Status failed;
  bool ok = reader([&](const char* data, size_t n) {
    total += n;
    if (total > hub.config.max_commit_body) {
      Error e(ErrorCode::InvalidArgument, "commit payload larger than " + std::to_string(hub.config.max_commit_body) + " bytes");
      e.http_status = 413;
      failed = e;
      return false;
    }
    pending.append(data, n);
    size_t start = 0;
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      if (auto st = parser.line(std::string_view(pending).substr(start, nl - start)); !st) {
        failed = st;
        return false;
      }
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > line_limit) {
      Error e(ErrorCode::InvalidArgument, "NDJSON line " + std::to_string(parser.line_no + 1) + " is longer than " +
                                              std::to_string(line_limit) + " bytes");
      e.http_status = 413;
      failed = e;
      return false;
    }
    return true;
  });
  if (!failed) return send_error(res, failed.error());
  if (!ok) return send_error(res, 400, "BadRequest", "commit body could not be read");
  if (!pending.empty()) {
    if (auto st = parser.line(pending); !st) return send_error(res, st.error());
  }
  if (!parser.have_header) return send_error(res, 400, "BadRequest", "empty commit payload: the header line is missing");
  if (auto st = parser.inline_blobs.commit(); !st) return send_error(res, st.error());

  for (const auto& op : parser.request.ops) {
    if (!op.lfs) continue;
    auto held = hub.store.holds_object(*repo, op.sha256);  // uploaded to this repo, or already in it
    if (!held) return send_error(res, held.error());
    if (!*held)
      return send_error(res, Error(ErrorCode::Integrity,
                                   "Your push was rejected because an LFS pointer pointed to a file that does not "
                                   "exist. Offending file: - " + op.path));
  }
  auto result = hub.store.commit(*repo, rev, parser.request);
  if (!result) {
    auto e = std::move(result).error();
    if (e.code == ErrorCode::Conflict) e.http_status = 412;
    return send_error(res, e);
  }
  std::string repo_url = base_url(req, hub.port) + "/" + std::string(url_prefix(key.type)) + key.id();
  json out{{"success", true}, {"commitOid", result->oid}, {"commitUrl", repo_url + "/commit/" + result->oid},
           {"hookOutput", ""}};
  if (result->pr_number > 0) {
    out["pullRequestUrl"] = repo_url + "/discussions/" + std::to_string(result->pr_number);
  } else if (parser.request.create_pr) {
    out["pullRequestUrl"] = nullptr;
  }
  send_json(res, out);
}

}  // namespace khub::localhub
