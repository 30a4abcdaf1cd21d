// Uploads: preupload (upload mode per file) and the Git LFS batch API with basic and multipart
// transfers. Upload URLs carry an HMAC signature instead of the caller's token (clients send
// no Authorization to them, as to S3).
#include <chrono>
#include <fstream>
#include <random>

#include "khub/base/hash.h"
#include "khub/json/fields.h"
#include "routes.h"
#include "tree_hash.h"

namespace khub::localhub {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {
std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Lines of a .gitattributes / .gitignore: `pattern` (plus attributes), '#' comments.
bool matches_any(std::string_view text, std::string_view path, bool need_lfs_filter) {
  std::string base(path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    auto sp = line.find_first_of(" \t");
    std::string_view pattern = line.substr(0, sp);
    if (need_lfs_filter && (sp == std::string_view::npos || line.find("filter=lfs", sp) == std::string_view::npos)) continue;
    if (!pattern.empty() && pattern.back() == '/') pattern.remove_suffix(1);  // a folder: match what is inside
    bool anchored = pattern.find('/') != std::string_view::npos;
    if (!pattern.empty() && pattern.front() == '/') pattern.remove_prefix(1);
    if (anchored ? (glob_match(pattern, path) || path.starts_with(std::string(pattern) + "/"))
                 : (glob_match(pattern, base) || path.find("/" + std::string(pattern) + "/") != std::string_view::npos ||
                    path.starts_with(std::string(pattern) + "/"))) {
      return true;
    }
  }
  return false;
}

bool looks_binary(std::string_view sample) { return sample.find('\0') != std::string_view::npos; }

std::string file_text(Hub& hub, const RepoRecord& repo, const std::string& commit, std::string_view path) {
  auto f = hub.store.find_file(repo, commit, path);
  if (!f || !*f || (*f)->lfs || (*f)->size > (1u << 20)) return {};
  auto text = hub.store.blobs().read((*f)->sha256);
  return text ? *text : std::string();
}
}  // namespace

void post_preupload(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key, std::string_view rev) {
  auto who = hub.identify(req);  // before the body: a refused caller's is never read
  auto repo = find_readable_repo(hub, who, key, res);
  if (!repo || !may_commit(hub, who, *repo, rev, req.get_param_value("create_pr") == "1", res)) return;
  auto body = read_body(reader, 8u << 20);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object() || !j.contains("files") || !j["files"].is_array()) {
    return send_error(res, 422, "BadRequest", "preupload body needs a \"files\" list");
  }
  if (!check_field_types(j, {{"gitAttributes", json::value_t::string}, {"gitIgnore", json::value_t::string}}, res)) return;
  auto commit = hub.store.resolve_revision(*repo, rev);
  if (!commit) return send_error(res, commit.error());
  std::string attrs = string_field(j, "gitAttributes", file_text(hub, *repo, *commit, ".gitattributes"));
  std::string ignore = string_field(j, "gitIgnore", file_text(hub, *repo, *commit, ".gitignore"));
  json out = json::array();
  for (const auto& f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_unsigned()) {
      return send_error(res, 422, "BadRequest", "each file needs \"path\" (string) and \"size\" (integer >= 0)");
    }
    auto path = f["path"].get<std::string>();
    if (auto why = check_repo_path(path); !why.empty()) {
      return send_error(res, 422, "BadRequest", "invalid path '" + path + "': " + why);
    }
    auto size = f["size"].get<std::uint64_t>();
    auto sample = base64_decode(string_field(f, "sample"));
    std::string sample_bytes = sample ? std::string(sample->begin(), sample->end()) : std::string();
    bool lfs = size > 0 && (size > hub.config.max_regular_file || (looks_binary(sample_bytes) && size > 1000000) ||
                            matches_any(attrs, path, true));
    json entry{{"path", path}, {"uploadMode", lfs ? "lfs" : "regular"},
               {"shouldIgnore", !ignore.empty() && matches_any(ignore, path, false)}};
    if (auto existing = hub.store.find_file(*repo, *commit, path); existing && *existing) {
      entry["oid"] = (*existing)->lfs ? (*existing)->sha256 : (*existing)->git_oid;
    }
    out.push_back(std::move(entry));
  }
  send_json(res, {{"commitOid", *commit}, {"files", out}});
}

void post_lfs_batch(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);  // before the body; uploads need write, below
  if (!repo) return;
  auto body = read_body(reader, 4u << 20);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object() || !j.contains("objects") || !j["objects"].is_array()) {
    return send_error(res, 422, "BadRequest", "LFS batch body needs an \"objects\" list");
  }
  if (!check_field_types(j, {{"operation", json::value_t::string}}, res)) return;
  auto op = string_field(j, "operation");
  if (op != "upload" && op != "download") return send_error(res, 422, "BadRequest", "operation must be upload or download");
  if (op == "upload" && !require_write(hub, who, key.ns, res)) return;
  if (op == "download" && !check_gate(hub, who, *repo, res)) return;
  bool multipart_ok = false;
  if (j.contains("transfers") && j["transfers"].is_array()) {
    for (const auto& t : j["transfers"]) multipart_ok |= t == "multipart";
  }
  auto base = blob_base(hub, req);
  auto exp = std::to_string(now_seconds() + 24 * 3600);
  auto chunk = hub.config.lfs_chunk_size;
  std::string verify = base_url(req, hub.port) + "/" + std::string(url_prefix(key.type)) + key.id() +
                       ".git/info/lfs/objects/verify";
  bool used_multipart = false;
  const std::string rowid = std::to_string(repo->rowid);  // signed into upload URLs: whose upload it is
  json objects = json::array();
  for (const auto& o : j["objects"]) {
    auto oid = o.is_object() && o.contains("oid") && o["oid"].is_string() ? o["oid"].get<std::string>() : std::string();
    bool size_ok = o.is_object() && o.contains("size") && o["size"].is_number_unsigned();
    std::uint64_t size = size_ok ? o["size"].get<std::uint64_t>() : 0;
    json out{{"oid", oid}, {"size", size}};
    auto fail = [&](std::string msg) { out["error"] = {{"code", 422}, {"message", std::move(msg)}}; };
    auto stored = hub.store.blobs().size_of(oid);
    bool held = true;
    if (op == "upload" && stored) {
      // Stored for another repo: this one gets it only by uploading the bytes (which proves the
      // client has them); otherwise knowing a sha256 would copy a private file, or reveal it exists.
      auto h = hub.store.holds_object(*repo, oid);
      if (!h) return send_error(res, h.error());
      held = *h;
    }
    if (oid.size() != 64 || !is_hex(oid) || oid != to_hex(from_hex(oid))) {
      fail("oid must be 64 lower-case hex characters");
    } else if (!size_ok) {
      fail("size must be an integer >= 0");
    } else if (size > hub.config.max_object_size) {
      fail("object larger than " + std::to_string(hub.config.max_object_size) + " bytes");
    } else if (op == "download") {
      auto referenced = hub.store.references_blob(*repo, oid);
      if (!stored || !referenced || !*referenced) {
        out["error"] = {{"code", 404}, {"message", "Object does not exist"}};
      } else {
        out["actions"]["download"] = {{"href", base + "/lfs-blob/" + oid + "?commit=&exp=" + exp + "&sig=" +
                                                   hub.sign("blob:" + oid + "::" + exp)}};
      }
    } else if (stored && held && *stored == size) {
      hub.store.blobs().touch(oid);  // no actions; kept by garbage collection until the commit comes
    } else if (stored && held) {
      fail("object " + oid + " is stored with size " + std::to_string(*stored));
    } else if (multipart_ok && size > chunk) {
      used_multipart = true;
      auto sz = std::to_string(size) + ":" + rowid, ck = std::to_string(chunk);
      json header{{"chunk_size", ck}};
      std::uint64_t parts = (size + chunk - 1) / chunk;
      for (std::uint64_t n = 1; n <= parts; ++n) {
        char key_buf[16];
        std::snprintf(key_buf, sizeof key_buf, "%05llu", static_cast<unsigned long long>(n));
        header[key_buf] = base + "/lfs-upload/" + oid + "/part/" + std::to_string(n) + "?size=" + std::to_string(size) +
                          "&chunk=" + ck + "&repo=" + rowid + "&exp=" + exp + "&sig=" +
                          hub.sign("part:" + oid + ":" + sz + ":" + ck + ":" + std::to_string(n) + ":" + exp);
      }
      out["actions"]["upload"] = {{"href", base + "/lfs-upload/" + oid + "/complete?size=" + std::to_string(size) +
                                               "&chunk=" + ck + "&repo=" + rowid + "&exp=" + exp + "&sig=" +
                                               hub.sign("complete:" + oid + ":" + sz + ":" + ck + ":" + exp)},
                                  {"header", header}, {"expires_in", 86400}};
      out["actions"]["verify"] = {{"href", verify}};
    } else {
      auto sz = std::to_string(size) + ":" + rowid;
      out["actions"]["upload"] = {{"href", base + "/lfs-upload/" + oid + "?size=" + std::to_string(size) + "&repo=" +
                                               rowid + "&exp=" + exp + "&sig=" + hub.sign("put:" + oid + ":" + sz + ":" + exp)},
                                  {"expires_in", 86400}};
      out["actions"]["verify"] = {{"href", verify}};
    }
    objects.push_back(std::move(out));
  }
  json reply{{"transfer", used_multipart ? "multipart" : "basic"}, {"objects", objects}};
  res.status = 200;
  res.set_content(reply.dump(), "application/vnd.git-lfs+json");
}

namespace {
bool signature_ok(Hub& hub, const Req& req, const std::string& payload_without_exp) {
  auto exp = req.get_param_value("exp");
  return std::strtoll(exp.c_str(), nullptr, 10) >= now_seconds() &&
         hub.signed_by_us(req.get_param_value("sig"), payload_without_exp + ":" + exp);
}

// An upload URL's repo (signed with it) may now commit the object.
Status grant_upload(Hub& hub, const Req& req, const std::string& oid) {
  auto rowid = std::strtoll(req.get_param_value("repo").c_str(), nullptr, 10);
  if (rowid <= 0) return Error(ErrorCode::InvalidArgument, "upload URL names no repo");
  return hub.store.grant_object(rowid, oid);
}

// Streams the request body into `sink`, refusing more than `limit` bytes. Integrity on mismatch.
Status receive(const Reader& reader, std::uint64_t limit, const std::function<Status(std::string_view)>& sink) {
  std::uint64_t got = 0;
  Status failed;
  bool ok = reader([&](const char* data, size_t n) {
    got += n;
    if (got > limit) {
      failed = Error(ErrorCode::Integrity, "body larger than the announced " + std::to_string(limit) + " bytes");
      return false;
    }
    if (auto st = sink(std::string_view(data, n)); !st) {
      failed = st;
      return false;
    }
    return true;
  });
  if (!failed) return failed;
  if (!ok) return Error(ErrorCode::Protocol, "upload body ended early");
  if (got != limit) {
    return Error(ErrorCode::Integrity, "size mismatch: expected " + std::to_string(limit) + " bytes, got " + std::to_string(got));
  }
  return {};
}
// Where the parts of one multipart upload wait: per object and per repo (the signed `repo`
// parameter), so a client uploading the same object to another repo can neither overwrite these
// parts nor remove them with its own completion.
fs::path parts_dir(Hub& hub, const Req& req, const std::string& oid) {
  std::string repo = req.get_param_value("repo");
  if (repo.empty() || repo.find_first_not_of("0123456789") != std::string::npos) repo = "none";
  return hub.store.blobs().upload_dir() / (oid + "." + repo);
}
}  // namespace

void put_lfs_object(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view oid_view, int part) {
  std::string oid(oid_view);
  auto size = std::strtoull(req.get_param_value("size").c_str(), nullptr, 10);
  auto chunk = std::strtoull(req.get_param_value("chunk").c_str(), nullptr, 10);
  const std::string sized = req.get_param_value("size") + ":" + req.get_param_value("repo");
  std::string payload = part == 0 ? "put:" + oid + ":" + sized
                                  : "part:" + oid + ":" + sized + ":" + req.get_param_value("chunk") + ":" +
                                        std::to_string(part);
  if (!signature_ok(hub, req, payload) || oid.size() != 64 || (part > 0 && chunk == 0)) {
    return send_error(res, 403, "Forbidden", "upload URL signature is invalid or expired");
  }
  if (part == 0) {
    auto writer = hub.store.blobs().begin();
    if (!writer) return send_error(res, writer.error());
    if (auto st = receive(reader, size, [&](std::string_view d) { return writer->write(d); }); !st) {
      return send_error(res, st.error());
    }
    auto info = writer->commit(oid, size);
    if (!info) return send_error(res, info.error());
    if (auto st = grant_upload(hub, req, oid); !st) return send_error(res, st.error());
    return send_json(res, json::object());
  }
  std::uint64_t offset = static_cast<std::uint64_t>(part - 1) * chunk;
  if (offset >= size) return send_error(res, 400, "BadRequest", "part " + std::to_string(part) + " is past the end");
  std::uint64_t expect = std::min<std::uint64_t>(chunk, size - offset);
  auto dir = parts_dir(hub, req, oid);
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto tmp = dir / (std::to_string(part) + ".tmp." + std::to_string(std::random_device{}()));
  std::ofstream out(tmp, std::ios::binary);
  Hasher hasher(HashAlgorithm::Sha256);
  auto st = receive(reader, expect, [&](std::string_view d) -> Status {
    hasher.update(d);
    out.write(d.data(), static_cast<std::streamsize>(d.size()));
    if (!out) return Error(ErrorCode::Io, "cannot write upload part");
    return {};
  });
  out.close();
  if (!st) {
    fs::remove(tmp, ec);
    return send_error(res, st.error());
  }
  fs::rename(tmp, dir / (std::to_string(part) + ".part"), ec);
  if (ec) return send_error(res, Error(ErrorCode::Io, "cannot store upload part: " + ec.message()));
  res.set_header("ETag", "\"" + to_hex(hasher.finish()) + "\"");
  send_json(res, json::object());
}

void post_lfs_complete(Hub& hub, const Req& req, Res& res, const Reader& reader, std::string_view oid_view) {
  std::string oid(oid_view);
  auto size = std::strtoull(req.get_param_value("size").c_str(), nullptr, 10);
  auto chunk = std::strtoull(req.get_param_value("chunk").c_str(), nullptr, 10);
  if (!signature_ok(hub, req, "complete:" + oid + ":" + req.get_param_value("size") + ":" + req.get_param_value("repo") +
                                  ":" + req.get_param_value("chunk")) ||
      chunk == 0) {
    return send_error(res, 403, "Forbidden", "completion URL signature is invalid or expired");
  }
  auto body = read_body(reader, 4u << 20);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  std::uint64_t parts = (size + chunk - 1) / chunk;
  if (j.is_discarded() || !j.is_object() || !j.contains("oid") || !j["oid"].is_string() ||
      j["oid"].get<std::string>() != oid || !j.contains("parts") ||
      !j["parts"].is_array() || j["parts"].size() != parts) {
    return send_error(res, 400, "BadRequest", "completion body needs oid " + oid + " and " + std::to_string(parts) + " parts");
  }
  auto dir = parts_dir(hub, req, oid);
  auto writer = hub.store.blobs().begin();
  if (!writer) return send_error(res, writer.error());
  for (std::uint64_t n = 1; n <= parts; ++n) {
    const auto& p = j["parts"][n - 1];
    const bool numbered = p.is_object() && p.contains("partNumber") && p["partNumber"].is_number_unsigned() &&
                          p["partNumber"].get<std::uint64_t>() == n;
    if (!numbered || !p.contains("etag") || !p["etag"].is_string()) {
      return send_error(res, 400, "BadRequest", "part " + std::to_string(n) + " is missing or out of order");
    }
    std::ifstream in(dir / (std::to_string(n) + ".part"), std::ios::binary);
    if (!in) return send_error(res, 400, "BadRequest", "part " + std::to_string(n) + " was never uploaded");
    Hasher hasher(HashAlgorithm::Sha256);
    std::vector<char> buf(1 << 16);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      std::string_view d(buf.data(), static_cast<size_t>(in.gcount()));
      if (d.empty()) break;
      hasher.update(d);
      if (auto st = writer->write(d); !st) return send_error(res, st.error());
    }
    if (p["etag"].get<std::string>() != "\"" + to_hex(hasher.finish()) + "\"") {
      return send_error(res, 400, "BadRequest", "etag of part " + std::to_string(n) + " does not match the uploaded part");
    }
  }
  auto info = writer->commit(oid, size);
  if (!info) return send_error(res, info.error());
  if (auto st = grant_upload(hub, req, oid); !st) return send_error(res, st.error());
  std::error_code ec;
  fs::remove_all(dir, ec);
  send_json(res, json::object());
}

void post_lfs_verify(Hub& hub, const Req& req, Res& res, const Reader& reader, const RepoKey& key) {
  auto who = hub.identify(req);
  auto repo = find_readable_repo(hub, who, key, res);  // before the body
  if (!repo) return;
  auto body = read_body(reader, 64u << 10);
  if (!body) return send_error(res, body.error());
  json j = json_fields::parse_untrusted(*body);
  if (j.is_discarded() || !j.is_object() || !j.contains("oid") || !j["oid"].is_string() || !j.contains("size") ||
      !j["size"].is_number_unsigned()) {
    return send_error(res, 422, "BadRequest", "verify body needs oid and size");
  }
  auto oid = j["oid"].get<std::string>();
  auto stored = hub.store.blobs().size_of(oid);
  auto held = hub.store.holds_object(*repo, oid);
  if (!held) return send_error(res, held.error());
  if (!stored || !*held || *stored != j["size"].get<std::uint64_t>()) {
    return send_error(res, 404, "EntryNotFound", "object " + oid + " is not stored with that size");
  }
  send_json(res, json::object());
}

}  // namespace khub::localhub
