#include "fixture_hub.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>
#include <filesystem>
#include <regex>
#include <thread>

#include "khub/base/hash.h"
#include "khub/xet/chunker.h"
#include "khub/xet/reconstruction.h"
#include "khub/xet/xorb.h"

namespace khub::test {
using nlohmann::json;

namespace {
std::string lfs_pointer(const std::string& sha256, std::size_t size) {
  return "version https://git-lfs.github.com/spec/v1\noid sha256:" + sha256 + "\nsize " + std::to_string(size) + "\n";
}

// A committed file with its hashes worked out once: the 256 MiB benchmark blob must not be hashed
// again by every request for it (that cost the cold-download benchmark a third of its time).
struct StoredFile {
  std::shared_ptr<const std::string> content;
  bool lfs = false;
  std::string sha256;    // LFS files: the object id
  std::string pointer;   // LFS files: the pointer file git stores in their place
  std::string blob_oid;  // git blob sha1 of what git stores (the pointer, or the content)
  std::string xet_hash;  // Xet files: the file's Xet hash

  explicit StoredFile(const FixtureFile& f)
      : content(std::make_shared<const std::string>(f.content)), lfs(f.lfs || f.xet) {
    if (lfs) {
      sha256 = sha256_hex(f.content);
      pointer = lfs_pointer(sha256, f.content.size());
    }
    blob_oid = git_blob_sha1_hex(lfs ? pointer : f.content);
  }
  const std::string& etag() const { return lfs ? sha256 : blob_oid; }
};

// A hex hash with its first digit changed: another blob's name, same shape.
std::string other_hash(std::string h) {
  if (!h.empty()) h[0] = h[0] == '0' ? '1' : '0';
  return h;
}

// Closes the server side of the loopback connection from `remote_port` to `local_port` (a HEAD
// that gets no answer at all): httplib offers no way to drop a connection from a handler.
void drop_connection(int local_port, int remote_port) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    int fd = -1;
    try {
      fd = std::stoi(e.path().filename().string());
    } catch (...) {
      continue;
    }
    sockaddr_in local{}, peer{};
    socklen_t n = sizeof local;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &n) != 0 || local.sin_family != AF_INET ||
        ntohs(local.sin_port) != local_port)
      continue;
    n = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &n) != 0 || ntohs(peer.sin_port) != remote_port) continue;
    ::shutdown(fd, SHUT_RDWR);
  }
}

// Sleeps `ms`, or less when the fixture is stopping (its destructor must not wait out a stall).
void stall(int ms, const std::atomic<bool>* stopping) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!stopping->load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// What the answer faults do to one answer (decided once, under the fixture's lock).
struct AnswerPlan {
  bool any = false;
  bool drop = false;
  bool wrong_bytes = false;
  std::size_t short_body = 0;
  std::size_t long_body = 0;
  int slow_ms = 0;
};

// The fixture's CAS: xorbs of at most 4 chunks (so a file of a few MiB spans several xorbs and
// terms), one term per xorb.
constexpr std::size_t kFixtureChunksPerXorb = 4;
const char* const kCasToken = "cas-fixture-token";

struct XetStore {
  std::map<std::string, std::shared_ptr<const std::string>> xorbs;   // hash → records
  std::map<std::string, std::vector<std::uint64_t>> record_ends;      // hash → end of each chunk's record
  std::map<std::string, std::vector<xet::ReconstructionTerm>> files;  // Xet hash → terms

  std::string add(const std::string& content) {
    const auto bytes = std::as_bytes(std::span(content));
    std::vector<xet::HashedSize> leaves;
    std::vector<xet::ReconstructionTerm> terms;
    xet::XorbWriter writer;
    std::vector<std::uint64_t> ends;
    auto seal = [&] {
      if (writer.empty()) return;
      const std::string name = writer.hash().str();
      const auto& r = writer.records();
      xorbs[name] = std::make_shared<const std::string>(reinterpret_cast<const char*>(r.data()), r.size());
      record_ends[name] = ends;
      terms.push_back({writer.hash(), static_cast<std::uint32_t>(writer.unpacked_size()), 0,
                       static_cast<std::uint32_t>(writer.chunks().size())});
      writer = xet::XorbWriter();
      ends.clear();
    };
    std::size_t at = 0;
    for (std::size_t n : xet::chunk_lengths(bytes)) {
      if (writer.chunks().size() == kFixtureChunksPerXorb) seal();
      const auto chunk = bytes.subspan(at, n);
      const xet::Hash h = xet::chunk_hash(chunk);
      writer.add(chunk, h);
      ends.push_back(writer.records().size());
      leaves.push_back({h, n});
      at += n;
    }
    seal();
    const std::string id = xet::file_hash(leaves).str();
    files[id] = std::move(terms);
    return id;
  }

  json reconstruction(const std::string& id, const std::string& cas_url) const {
    xet::Reconstruction r;
    r.terms = files.at(id);
    for (const auto& t : r.terms) {
      const auto& ends = record_ends.at(t.xorb.str());
      r.fetch_info[t.xorb] = {{t.chunk_start, t.chunk_end, cas_url + "/xorbs/" + t.xorb.str() + "?sig=fixture", 0,
                               ends[t.chunk_end - 1] - 1}};
    }
    return json::parse(xet::to_json(r));
  }
};

struct Repo {
  std::string type;
  std::map<std::string, std::string> branches;  // name → commit
  std::vector<std::string> branch_order;
  std::map<std::string, std::map<std::string, StoredFile>> commits;
  bool gated = false;
  std::map<std::string, std::string> ref_targets;  // branch → what the refs listing claims instead
};
}  // namespace

struct FixtureHub::State {
  httplib::Server hub;
  httplib::Server cdn;
  int hub_port = 0;
  int cdn_port = 0;
  std::thread hub_thread, cdn_thread;
  mutable std::mutex mutex;
  std::map<std::string, Repo> repos;
  std::map<std::string, bool> trusted;
  std::map<std::string, std::shared_ptr<const std::string>> blobs;  // sha256 → content
  XetStore xet;
  std::string token;
  Faults faults;
  std::vector<RequestRecord> log;
  int commit_counter = 0;
  std::atomic<bool> stopping{false};

  void record(const std::string& server, const httplib::Request& req) {
    std::string path = req.path;
    if (!req.params.empty()) {
      path += '?';
      for (const auto& [k, v] : req.params) path += k + "=" + v + "&";
      path.pop_back();
    }
    log.push_back({server, req.method, path, req.get_header_value("Authorization"), req.get_header_value("Range"),
                   req.get_header_value("User-Agent")});
  }
  bool matches(const httplib::Request& req) const {
    if (!faults.match.empty() && req.path.find(faults.match) == std::string::npos) return false;
    if (!faults.method.empty() && req.method != faults.method) return false;
    if (!faults.skip.empty() && req.path.find(faults.skip) != std::string::npos) return false;
    if (faults.ranged_only && !req.has_header("Range")) return false;
    return true;
  }
  // The answer faults for this request, counted against `times`.
  AnswerPlan take_answer_faults(const httplib::Request& req) {
    AnswerPlan p;
    const bool set = faults.drop || faults.wrong_bytes || faults.short_body > 0 || faults.long_body > 0 ||
                     faults.slow_ms > 0;
    if (!set || faults.times == 0 || !matches(req)) return p;
    if (faults.times > 0) --faults.times;
    return {true, faults.drop, faults.wrong_bytes, faults.short_body, faults.long_body, faults.slow_ms};
  }
  // A HEAD's drop or stall happens after the handler, outside the lock (see the post-routing handler).
  static void mark_head(httplib::Response& res, const AnswerPlan& p) {
    if (p.drop) res.set_header("X-Fixture-Head", "drop");
    else if (p.slow_ms > 0) res.set_header("X-Fixture-Head", "slow " + std::to_string(p.slow_ms));
  }
  // Serves data[from..] with the plan's body faults; `stop` (npos: none) drops the connection there.
  void provide(httplib::Response& res, std::shared_ptr<const std::string> data, std::size_t from,
                      std::size_t stop, const AnswerPlan& plan, const char* type) {
    if (plan.wrong_bytes || plan.long_body > 0) {
      auto copy = std::make_shared<std::string>(data->substr(from));
      if (plan.wrong_bytes && !copy->empty()) (*copy)[0] = static_cast<char>((*copy)[0] ^ 0x5a);
      copy->append(plan.long_body, 'x');
      data = copy;
      from = 0;
    }
    const std::size_t length = data->size() - from;
    if (plan.short_body > 0) stop = std::min(stop, length - std::min(length, plan.short_body));
    if (plan.drop) stop = std::min(stop, std::max<std::size_t>(1, length / 2));  // mid-body: at least a byte
    const std::size_t stall_at = plan.slow_ms > 0 ? length / 2 : std::string::npos;
    auto stalled = std::make_shared<std::atomic<bool>>(false);
    const int slow_ms = plan.slow_ms;
    const std::atomic<bool>* stop_flag = &stopping;
    res.set_content_provider(length, type, [=](std::size_t offset, std::size_t want, httplib::DataSink& sink) {
      if (offset >= stop) return false;  // drop the connection
      if (offset >= stall_at && !stalled->exchange(true)) stall(slow_ms, stop_flag);
      std::size_t n = std::min({want, length - offset, std::size_t{1} << 20});
      if (stop != std::string::npos) n = std::min(n, stop - offset);
      if (offset < stall_at && !*stalled) n = std::min(n, stall_at - offset);
      sink.write(data->data() + from + offset, n);
      return true;
    });
  }
  // Applies status faults; true when the response is already decided.
  bool inject_status(const httplib::Request& req, httplib::Response& res) {
    if (faults.fail_count <= 0 || !matches(req)) return false;
    --faults.fail_count;
    const_cast<httplib::Request&>(req).ranges.clear();  // else httplib answers a resume's Range with 416
    res.status = faults.fail_status;
    if (!faults.rate_limit.empty()) res.set_header("RateLimit", faults.rate_limit);
    if (!faults.retry_after.empty()) res.set_header("Retry-After", faults.retry_after);
    res.set_content("{\"error\":\"injected\"}", "application/json");
    return true;
  }
  static void error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    if (!code.empty()) res.set_header("X-Error-Code", code);
    res.set_header("X-Error-Message", message);
    res.set_header("X-Request-Id", "req-fixture");
    res.set_content(json{{"error", message}}.dump(), "application/json");
  }
  void api_json(const httplib::Request& req, httplib::Response& res, const json& j) {
    res.set_header("X-Request-Id", "req-fixture");
    const bool garbage = faults.garbage_json && matches(req);
    std::string text = garbage ? "<html>not json" : j.dump();
    const char* type = garbage ? "text/html" : "application/json";
    const AnswerPlan plan = take_answer_faults(req);
    if (!plan.any) return res.set_content(text, type);
    provide(res, std::make_shared<const std::string>(std::move(text)), 0, std::string::npos, plan, type);
  }
  // Finds repo and commit; answers the error itself when it cannot.
  Repo* find_repo(const std::string& type, const std::string& id, const httplib::Request& req,
                  httplib::Response& res) {
    if (!token.empty() && req.get_header_value("Authorization") != "Bearer " + token) {
      error(res, 401, "", "Invalid username or password.");
      return nullptr;
    }
    auto it = repos.find(id);
    if (it == repos.end() || it->second.type != type) {
      error(res, 404, "RepoNotFound", "Repository not found");
      return nullptr;
    }
    return &it->second;
  }
  std::string resolve_rev(Repo& repo, const std::string& rev) {
    if (repo.commits.count(rev)) return rev;
    auto b = repo.branches.find(rev);
    return b == repo.branches.end() ? std::string() : b->second;
  }
  // Serves `body` (shared, not copied) with Range support and the body faults.
  void serve_bytes(const httplib::Request& req, httplib::Response& res, std::shared_ptr<const std::string> body) {
    if (faults.corrupt && matches(req) && !body->empty()) {
      auto bad = std::make_shared<std::string>(*body);
      (*bad)[0] = static_cast<char>((*bad)[0] ^ 0x5a);
      body = bad;
    }
    res.set_header("Accept-Ranges", "bytes");
    std::size_t start = 0;
    std::string range = req.get_header_value("Range");
    if (!range.empty() && !(faults.ignore_range && matches(req))) {
      start = std::min<std::size_t>(std::stoull(range.substr(range.find('=') + 1)), body->size());
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(start) + "-" + std::to_string(body->size() - 1) + "/" +
                                          std::to_string(body->size()));
    }
    // httplib slices ranged responses itself; this fixture decides ranges on its own.
    const_cast<httplib::Request&>(req).ranges.clear();
    std::size_t drop = std::string::npos;
    if (faults.drop_count > 0 && matches(req) && req.method == "GET") {
      --faults.drop_count;
      drop = faults.drop_after;
    }
    if (faults.prime_drop_after > 0 && req.method == "GET" && range.empty() &&
        req.path.find("/api/") == std::string::npos)
      drop = std::min(drop, faults.prime_drop_after);
    const AnswerPlan plan = take_answer_faults(req);
    if (req.method == "HEAD") {  // the headers are the answer: its size and ETag
      std::size_t announced = body->size() - start;
      announced -= std::min(announced, plan.short_body);
      announced += plan.long_body;
      if (plan.wrong_bytes) {
        std::string etag = res.get_header_value("ETag");
        std::erase(etag, '"');
        res.headers.erase("ETag");
        res.set_header("ETag", "\"" + other_hash(etag) + "\"");
      }
      mark_head(res, plan);
      res.set_content_provider(announced, "application/octet-stream",
                               [](std::size_t, std::size_t, httplib::DataSink&) { return false; });
      return;
    }
    provide(res, body, start, drop, plan, "application/octet-stream");
  }
  void routes();
};

// Routes: the subset of the Hub's API that the client uses.

namespace {
std::string id_of(const httplib::Match& m, int first) { return std::string(m[first]) + "/" + std::string(m[first + 1]); }
std::string type_of(const std::string& segment) { return segment == "kernels" || segment == "kernels/" ? "kernel" : "model"; }
}  // namespace

void FixtureHub::State::routes() {
  auto& s = *this;
  using httplib::Request;
  using httplib::Response;
  s.hub.set_pre_routing_handler([&s](const Request& req, Response&) {
    std::lock_guard<std::mutex> g(s.mutex);
    s.record("hub", req);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.cdn.set_pre_routing_handler([&s](const Request& req, Response&) {
    std::lock_guard<std::mutex> g(s.mutex);
    s.record("cdn", req);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // A HEAD's (or redirect's) drop and stall, marked by the handler: done here, outside the lock.
  auto head_faults = [&s](const int* port) {
    return [&s, port](const Request& req, Response& res) {
      const std::string action = res.get_header_value("X-Fixture-Head");
      if (action.empty()) return;
      res.headers.erase("X-Fixture-Head");
      if (action == "drop") drop_connection(*port, req.remote_port);
      else stall(std::stoi(action.substr(5)), &s.stopping);
    };
  };
  s.hub.set_post_routing_handler(head_faults(&s.hub_port));
  s.cdn.set_post_routing_handler(head_faults(&s.cdn_port));

  s.hub.Get(R"(/api/organizations/([^/]+)/overview)", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    auto it = s.trusted.find(req.matches[1]);
    if (it == s.trusted.end()) return s.error(res, 404, "", "Sorry, we can't find the page you are looking for.");
    s.api_json(req, res, json{{"name", std::string(req.matches[1])}, {"trustedKernelPublisher", it->second}});
  });

  s.hub.Get(R"(/api/(kernels|models)/([^/]+)/([^/]+)/refs)", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    auto* repo = s.find_repo(type_of(req.matches[1]), id_of(req.matches, 2), req, res);
    if (!repo) return;
    json branches = json::array();
    for (const auto& name : repo->branch_order)
      branches.push_back({{"name", name}, {"ref", "refs/heads/" + name},
                          {"targetCommit", repo->ref_targets.count(name) ? repo->ref_targets[name] : repo->branches[name]}});
    s.api_json(req, res, json{{"branches", branches}, {"tags", json::array()}, {"converts", json::array()}});
  });

  auto revision = [&s](const Request& req, Response& res, const std::string& rev) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    std::string id = id_of(req.matches, 2);
    auto* repo = s.find_repo(type_of(req.matches[1]), id, req, res);
    if (!repo) return;
    std::string commit = s.resolve_rev(*repo, rev);
    if (commit.empty()) return s.error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    s.api_json(req, res, json{{"id", id}, {"sha", commit}, {"private", false}, {"gated", repo->gated}});
  };
  s.hub.Get(R"(/api/(kernels|models)/([^/]+)/([^/]+)/revision/([^/]+))",
            [revision](const Request& req, Response& res) { revision(req, res, req.matches[4]); });
  s.hub.Get(R"(/api/(kernels|models)/([^/]+)/([^/]+))",
            [revision](const Request& req, Response& res) { revision(req, res, "main"); });

  s.hub.Get(R"(/api/(kernels|models)/([^/]+)/([^/]+)/tree/([^/]+)(/.*)?)", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    auto* repo = s.find_repo(type_of(req.matches[1]), id_of(req.matches, 2), req, res);
    if (!repo) return;
    std::string commit = s.resolve_rev(*repo, req.matches[4]);
    if (commit.empty()) return s.error(res, 404, "RevisionNotFound", "Invalid rev id");
    std::string prefix = req.matches[5].length() > 1 ? std::string(req.matches[5]).substr(1) + "/" : "";
    bool recursive = req.get_param_value("recursive") == "true";
    std::map<std::string, json> entries;
    for (const auto& [path, f] : repo->commits[commit]) {
      if (path.rfind(prefix, 0) != 0) continue;
      std::string rest = path.substr(prefix.size());
      for (auto slash = rest.find('/'); slash != std::string::npos; slash = rest.find('/', slash + 1)) {
        std::string dir = prefix + rest.substr(0, slash);
        entries[dir] = {{"type", "directory"}, {"oid", git_blob_sha1_hex(dir)}, {"path", dir}, {"size", 0}};
        if (!recursive) break;
      }
      if (!recursive && rest.find('/') != std::string::npos) continue;
      json e = {{"type", "file"}, {"path", path}, {"size", f.content->size()}, {"oid", f.blob_oid}};
      if (f.lfs) e["lfs"] = {{"oid", f.sha256}, {"size", f.content->size()}, {"pointerSize", f.pointer.size()}};
      entries[path] = e;
    }
    if (entries.empty() && !prefix.empty()) return s.error(res, 404, "EntryNotFound", "Entry not found");
    json all = json::array();
    for (auto& [p, e] : entries) all.push_back(e);
    if (s.faults.escape_path && s.matches(req))
      all.push_back({{"type", "file"}, {"path", prefix + "../../escape"}, {"oid", git_blob_sha1_hex("x")}, {"size", 1}});
    std::size_t offset = req.has_param("cursor") ? std::stoull(req.get_param_value("cursor")) : 0;
    if (s.faults.page_size > 0) {
      std::size_t end = std::min(all.size(), offset + static_cast<std::size_t>(s.faults.page_size));
      json page = json::array();
      for (std::size_t i = offset; i < end; ++i) page.push_back(all[i]);
      if (end < all.size())
        res.set_header("Link", "<http://" + req.get_header_value("Host") + req.path + "?recursive=" +
                                   (recursive ? "true" : "false") + "&cursor=" + std::to_string(end) + ">; rel=\"next\"");
      all = page;
    }
    s.api_json(req, res, all);
  });

  s.hub.Get(R"(/api/resolve-cache/(kernels|models)/([^/]+)/([^/]+)/([0-9a-f]{40})/(.+))",
            [&s](const Request& req, Response& res) {
              std::lock_guard<std::mutex> g(s.mutex);
              if (s.inject_status(req, res)) return;
              auto* repo = s.find_repo(type_of(req.matches[1]), id_of(req.matches, 2), req, res);
              if (!repo) return;
              auto& files = repo->commits[req.matches[4]];
              auto it = files.find(req.matches[5]);
              if (it == files.end()) return s.error(res, 404, "EntryNotFound", "Entry not found");
              res.set_header("ETag", "\"" + it->second.etag() + "\"");
              res.set_header("X-Repo-Commit", std::string(req.matches[4]));
              s.serve_bytes(req, res, it->second.content);
            });

  s.hub.Get(R"(/(kernels/)?([^/]+)/([^/]+)/resolve/([^/]+)/(.+))", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    std::string type = type_of(req.matches[1]);
    auto* repo = s.find_repo(type, id_of(req.matches, 2), req, res);
    if (!repo) return;
    if (repo->gated && req.get_header_value("Authorization").empty())
      return s.error(res, 401, "GatedRepo", "Access to this kernel is restricted. Please log in.");
    std::string rev = req.matches[4];
    std::string commit = s.resolve_rev(*repo, rev);
    if (commit.empty()) return s.error(res, 404, "RevisionNotFound", "Invalid rev id: " + rev);
    std::string path = req.matches[5];
    auto& files = repo->commits[commit];
    auto it = files.find(path);
    res.set_header("X-Repo-Commit", !s.faults.repo_commit.empty() && s.matches(req) ? s.faults.repo_commit : commit);
    if (it == files.end()) return s.error(res, 404, "EntryNotFound", "Entry not found");
    const auto& f = it->second;
    if (f.lfs) {
      const std::string& sha = f.sha256;
      const AnswerPlan plan = s.take_answer_faults(req);
      s.mark_head(res, plan);
      res.status = 302;
      res.set_header("Location", !s.faults.lfs_location.empty() && s.matches(req)
                                     ? s.faults.lfs_location
                                     : "http://localhost:" + std::to_string(s.cdn_port) + "/blobs/" + sha +
                                           "?X-Amz-Signature=fixture-secret&X-Amz-Expires=3600");
      res.set_header("X-Linked-Etag", "\"" + (plan.wrong_bytes ? other_hash(sha) : sha) + "\"");
      res.set_header("X-Linked-Size", std::to_string(f.content->size() - std::min(f.content->size(), plan.short_body) +
                                                     plan.long_body));
      res.set_header("ETag", "\"" + f.blob_oid + "\"");
      if (!f.xet_hash.empty()) {
        res.set_header("X-Xet-Hash", f.xet_hash);
        res.set_header("Link", "<http://127.0.0.1:" + std::to_string(s.hub_port) + "/api/" + type + "s/" +
                                   id_of(req.matches, 2) + "/xet-read-token/" + commit + ">; rel=\"xet-auth\"");
      }
      res.set_content("Found. Redirecting", "text/plain");
      return;
    }
    if (rev != commit) {
      res.status = 307;
      res.set_header("Location", "/api/resolve-cache/" + std::string(type == "kernel" ? "kernels/" : "models/") +
                                     id_of(req.matches, 2) + "/" + commit + "/" + path + "?etag=%22" +
                                     f.etag() + "%22");
      res.set_content("Temporary Redirect", "text/plain");
      return;
    }
    res.set_header("ETag", "\"" + (!s.faults.etag.empty() && s.matches(req) ? s.faults.etag : f.etag()) + "\"");
    s.serve_bytes(req, res, f.content);
  });

  // Xet: the read token on the Hub, the CAS on the "cdn" host (docs/xet.md "Download").
  s.hub.Get(R"(/api/(kernels|models)/([^/]+)/([^/]+)/xet-read-token/([^/]+))", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (s.inject_status(req, res)) return;
    if (!s.find_repo(type_of(req.matches[1]), id_of(req.matches, 2), req, res)) return;
    const std::string cas = "http://localhost:" + std::to_string(s.cdn_port);
    const auto exp = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count() + 3600;
    res.set_header("X-Xet-Cas-Url", cas);
    res.set_header("X-Xet-Access-Token", kCasToken);
    res.set_header("X-Xet-Token-Expiration", std::to_string(exp));
    s.api_json(req, res, {{"accessToken", kCasToken}, {"exp", exp}, {"casUrl", cas}});
  });
  s.cdn.Get(R"(/v1/reconstructions/([0-9a-f]{64}))", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (req.get_header_value("Authorization") != std::string("Bearer ") + kCasToken)
      return s.error(res, 401, "", "Invalid CAS token");
    if (s.inject_status(req, res)) return;
    if (!s.xet.files.count(req.matches[1])) return s.error(res, 404, "", "File not found");
    const_cast<Request&>(req).ranges.clear();  // the Range names file bytes to describe, not to slice
    s.api_json(req, res, s.xet.reconstruction(req.matches[1], "http://localhost:" + std::to_string(s.cdn_port)));
  });
  s.cdn.Get(R"(/xorbs/([0-9a-f]{64}))", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (!req.get_header_value("Authorization").empty()) return s.error(res, 400, "", "fetch URLs carry their own auth");
    if (s.inject_status(req, res)) return;
    auto it = s.xet.xorbs.find(req.matches[1]);
    if (it == s.xet.xorbs.end()) return s.error(res, 404, "", "No such xorb");
    const std::string range = req.get_header_value("Range");  // bytes=a-b
    const auto dash = range.find('-');
    const std::size_t first = std::stoull(range.substr(range.find('=') + 1)), last = std::stoull(range.substr(dash + 1));
    const_cast<Request&>(req).ranges.clear();
    res.status = 206;
    res.set_header("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                        std::to_string(it->second->size()));
    s.provide(res, std::make_shared<const std::string>(it->second->substr(first, last - first + 1)), 0,
              std::string::npos, s.take_answer_faults(req), "application/octet-stream");
  });

  s.cdn.Get(R"(/blobs/([0-9a-f]{64}))", [&s](const Request& req, Response& res) {
    std::lock_guard<std::mutex> g(s.mutex);
    if (!req.get_header_value("Authorization").empty()) {
      res.status = 400;  // what S3 answers to a second auth mechanism
      res.set_content("InvalidArgument: Only one auth mechanism allowed", "text/plain");
      return;
    }
    if (s.inject_status(req, res)) return;
    if (!s.faults.cdn_location.empty() && s.matches(req)) {
      res.status = 302;
      res.set_header("Location", s.faults.cdn_location);
      return;
    }
    auto it = s.blobs.find(req.matches[1]);
    if (it == s.blobs.end()) {
      res.status = 404;
      return;
    }
    s.serve_bytes(req, res, it->second);
  });
}

FixtureHub::FixtureHub() : state_(std::make_unique<State>()) {
  state_->routes();
  // Clients that outlive a test keep connections open; do not let stop() wait long for them.
  state_->hub.set_keep_alive_timeout(1);
  state_->hub.set_tcp_nodelay(true);
  state_->cdn.set_tcp_nodelay(true);
  state_->cdn.set_keep_alive_timeout(1);
  state_->hub_port = state_->hub.bind_to_any_port("127.0.0.1");
  state_->cdn_port = state_->cdn.bind_to_any_port("127.0.0.1");
  state_->hub_thread = std::thread([s = state_.get()] { s->hub.listen_after_bind(); });
  state_->cdn_thread = std::thread([s = state_.get()] { s->cdn.listen_after_bind(); });
  while (!state_->hub.is_running() || !state_->cdn.is_running())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FixtureHub::~FixtureHub() {
  state_->stopping = true;
  state_->hub.stop();
  state_->cdn.stop();
  state_->hub_thread.join();
  state_->cdn_thread.join();
}

std::string FixtureHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(state_->hub_port); }
std::string FixtureHub::cdn_host() const { return "localhost:" + std::to_string(state_->cdn_port); }

std::string FixtureHub::commit(const std::string& id, const std::string& branch,
                               std::map<std::string, FixtureFile> files, const std::string& type) {
  std::lock_guard<std::mutex> g(state_->mutex);
  auto& repo = state_->repos[id];
  repo.type = type;
  std::string commit = git_blob_sha1_hex(id + "@" + branch + "#" + std::to_string(++state_->commit_counter));
  auto& stored = repo.commits[commit];
  for (const auto& [path, f] : files) {
    StoredFile& file = stored.emplace(path, StoredFile(f)).first->second;
    if (file.lfs) state_->blobs[file.sha256] = file.content;
    if (f.xet) file.xet_hash = state_->xet.add(f.content);
  }
  if (!repo.branches.count(branch)) repo.branch_order.push_back(branch);
  repo.branches[branch] = commit;
  if (!repo.branches.count("main")) {
    repo.branch_order.push_back("main");
    repo.branches["main"] = commit;
  }
  return commit;
}

void FixtureHub::set_trusted(const std::string& org, bool trusted) {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->trusted[org] = trusted;
}
void FixtureHub::set_gated(const std::string& id, bool gated) {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->repos[id].gated = gated;
}
void FixtureHub::set_ref_target(const std::string& id, const std::string& branch, const std::string& target) {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->repos[id].ref_targets[branch] = target;
}
void FixtureHub::require_token(const std::string& token) {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->token = token;
}
void FixtureHub::set_faults(const Faults& faults) {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->faults = faults;
}
std::vector<RequestRecord> FixtureHub::requests() const {
  std::lock_guard<std::mutex> g(state_->mutex);
  return state_->log;
}
void FixtureHub::clear_requests() {
  std::lock_guard<std::mutex> g(state_->mutex);
  state_->log.clear();
}

}  // namespace khub::test
