// `khub serve` as a process: the listening line, the request log, clean stop on SIGTERM/SIGINT,
// refusal of unsafe or malformed options, and `--gc` beside a running server.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "test_support.h"

extern char** environ;

namespace khub::localhub::testing {
namespace {

struct Process {
  pid_t pid = -1;
  int out = -1;  // stdout pipe
  std::filesystem::path err_file;
};

Process spawn_serve(const std::vector<std::string>& args, const std::filesystem::path& err_file) {
  int pipefd[2];
  EXPECT_EQ(pipe(pipefd), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  std::vector<std::string> all{KHUB_CLI, "serve"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  Process p;
  EXPECT_EQ(posix_spawn(&p.pid, KHUB_CLI, &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  p.out = pipefd[0];
  p.err_file = err_file;
  return p;
}

std::string read_line(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line.push_back(c);
  return line;
}

std::string slurp(const std::filesystem::path& f) {
  std::ifstream in(f);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(CliServe, ListensLogsAndStopsOnSignals) {
  for (int sig : {SIGTERM, SIGINT}) {
    TempDir dir("cli");
    auto p = spawn_serve({"--root", (dir.path / "store").string(), "--port", "0", "--token", "hf_w:write", "--trust",
                          "acme", "--fault", "/api/kernels/acme/relu/refs=503,count=1"},
                         dir.path / "err.log");
    auto line = read_line(p.out);
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, std::regex(R"(khub serve: listening on http://127\.0\.0\.1:(\d+))"))) << line;
    httplib::Client c("127.0.0.1", std::stoi(m[1]));
    EXPECT_EQ(c.Post("/api/repos/create", {{"Authorization", "Bearer hf_w"}},
                     R"({"name":"relu","organization":"acme","type":"kernel"})", "application/json")->status, 200);
    EXPECT_EQ(c.Get("/api/kernels/acme/relu/refs")->status, 503);
    EXPECT_EQ(nlohmann::json::parse(c.Get("/api/organizations/acme/overview")->body)["trustedKernelPublisher"], true);
    kill(p.pid, sig);
    EXPECT_EQ(wait_exit(p.pid), 0);
    close(p.out);
    auto err = slurp(p.err_file);
    EXPECT_NE(err.find("127.0.0.1 \"POST /api/repos/create\" 200"), std::string::npos) << err;
    EXPECT_NE(err.find("\"GET /api/kernels/acme/relu/refs\" 503"), std::string::npos) << err;
    EXPECT_NE(err.find("stopping"), std::string::npos) << err;
    EXPECT_EQ(err.find("hf_w"), std::string::npos) << "tokens must never be logged";
  }
}

TEST(CliServe, RefusesUnsafeOrMalformedOptions) {
  TempDir dir("cli-bad");
  auto open = spawn_serve({"--root", dir.path.string(), "--host", "0.0.0.0"}, dir.path / "e1.log");
  EXPECT_EQ(wait_exit(open.pid), 2);
  close(open.out);
  auto e1 = slurp(dir.path / "e1.log");
  EXPECT_NE(e1.find("error: refusing to serve on 0.0.0.0 without tokens"), std::string::npos) << e1;
  auto fault = spawn_serve({"--root", dir.path.string(), "--fault", "*=explode"}, dir.path / "e2.log");
  EXPECT_EQ(wait_exit(fault.pid), 2);
  close(fault.out);
  EXPECT_NE(slurp(dir.path / "e2.log").find("unknown action"), std::string::npos);
  std::ofstream(dir.path / "bad.json") << R"({"tokens": "nope"})";
  auto cfg = spawn_serve({"--root", dir.path.string(), "--config", (dir.path / "bad.json").string()}, dir.path / "e3.log");
  EXPECT_EQ(wait_exit(cfg.pid), 2);
  close(cfg.out);
  EXPECT_NE(slurp(dir.path / "e3.log").find("tokens must be a list"), std::string::npos);
  // A host that is no address is named as such, before the tokens or the store are looked at.
  auto host = spawn_serve({"--root", (dir.path / "nohost").string(), "--host", "999.1.1.1"}, dir.path / "e8.log");
  EXPECT_EQ(wait_exit(host.pid), 2);
  close(host.out);
  EXPECT_NE(slurp(dir.path / "e8.log").find("--host 999.1.1.1 is no address"), std::string::npos)
      << slurp(dir.path / "e8.log");
  EXPECT_FALSE(std::filesystem::exists(dir.path / "nohost"));
  // --gc's options without --gc, and --gc on a folder that holds no store (a typo), do nothing.
  const auto missing = dir.path / "no-such-store";
  int n = 4;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--root", dir.path.string(), "--dry-run"}, {"--root", dir.path.string(), "--json"},
        {"--root", dir.path.string(), "--grace", "5"}, {"--root", missing.string(), "--gc"}}) {
    const auto log = dir.path / ("e" + std::to_string(n++) + ".log");
    auto p = spawn_serve(args, log);
    EXPECT_EQ(wait_exit(p.pid), 2) << slurp(log);
    close(p.out);
    EXPECT_EQ(slurp(log).find('\n'), slurp(log).size() - 1) << "one line: " << slurp(log);
  }
  EXPECT_FALSE(std::filesystem::exists(missing));
}

// A second `khub serve` on a --root that a running one serves exits with one line naming the
// holder, and the first keeps serving.
TEST(CliServe, SecondServerOnOneRootRefusesToStart) {
  TempDir dir("cli-two");
  const auto root = dir.path / "store";
  auto first = spawn_serve({"--root", root.string(), "--port", "0", "-q"}, dir.path / "s1.log");
  std::smatch m;
  auto line = read_line(first.out);
  ASSERT_TRUE(std::regex_match(line, m, std::regex(R"(khub serve: listening on http://127\.0\.0\.1:(\d+))"))) << line;
  auto second = spawn_serve({"--root", root.string(), "--port", "0", "-q"}, dir.path / "s2.log");
  std::string out;
  char ch;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);;) {  // EOF when it exits
    pollfd p{second.out, POLLIN, 0};
    if (std::chrono::steady_clock::now() > until || poll(&p, 1, 100) < 0) {
      kill(second.pid, SIGKILL);  // it started: a failure, but never a hang
      break;
    }
    if (p.revents == 0) continue;
    if (read(second.out, &ch, 1) != 1) break;
    out.push_back(ch);
  }
  close(second.out);
  EXPECT_EQ(wait_exit(second.pid), 1) << out;
  EXPECT_EQ(out, "");
  const auto err = slurp(dir.path / "s2.log");
  EXPECT_NE(err.find("another khub serve (pid " + std::to_string(first.pid) + ") serves " + root.string()),
            std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), err.size() - 1) << "one line: " << err;
  httplib::Client c("127.0.0.1", std::stoi(m[1]));
  EXPECT_EQ(c.Get("/api/kernels/acme/missing")->status, 404);
  kill(first.pid, SIGTERM);
  EXPECT_EQ(wait_exit(first.pid), 0);
  close(first.out);
}

// `khub serve --gc` beside a server serving the same store: the deleted repo's blob goes, the
// running server's upload in flight and its other repos stay.
TEST(CliServe, GarbageCollectionBesideARunningServer) {
  TempDir dir("cli-gc");
  const auto root = dir.path / "store";
  auto server = spawn_serve({"--root", root.string(), "--port", "0", "--token", "hf_w:write", "-q"}, dir.path / "s.log");
  std::smatch m;
  auto line = read_line(server.out);
  ASSERT_TRUE(std::regex_match(line, m, std::regex(R"(khub serve: listening on http://127\.0\.0\.1:(\d+))"))) << line;
  httplib::Client c("127.0.0.1", std::stoi(m[1]));
  const httplib::Headers auth{{"Authorization", "Bearer hf_w"}};
  for (const char* name : {"gone", "kept"}) {
    nlohmann::json create{{"name", name}, {"organization", "acme"}, {"type", "kernel"}};
    ASSERT_EQ(c.Post("/api/repos/create", auth, create.dump(), "application/json")->status, 200);
  }
  const std::string content = "only the deleted repo had this";
  std::string body = nlohmann::json{{"key", "header"}, {"value", {{"summary", "add"}}}}.dump() + "\n" +
                     nlohmann::json{{"key", "file"}, {"value", {{"path", "x.txt"}, {"content", b64(content)},
                                                                {"encoding", "base64"}}}}.dump() + "\n";
  ASSERT_EQ(c.Post("/api/kernels/acme/gone/commit/main", auth, body, "application/x-ndjson")->status, 200);
  nlohmann::json del{{"name", "gone"}, {"organization", "acme"}, {"type", "kernel"}};
  ASSERT_EQ(c.Delete("/api/repos/delete", auth, del.dump(), "application/json")->status, 200);
  const auto in_flight = root / "uploads" / std::string(64, 'c') / "1.part";
  std::filesystem::create_directories(in_flight.parent_path());
  std::ofstream(in_flight) << "part of an upload in progress";

  auto gc = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"--root", root.string(), "--gc", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto p = spawn_serve(args, dir.path / "gc.log");
    std::string out;
    char ch;
    while (read(p.out, &ch, 1) == 1) out.push_back(ch);
    close(p.out);
    EXPECT_EQ(wait_exit(p.pid), 0) << slurp(dir.path / "gc.log");
    return nlohmann::json::parse(out, nullptr, false);
  };
  auto first = gc({});  // default grace: everything is younger than an hour
  EXPECT_EQ(first["trees_removed"], 1) << first.dump();
  EXPECT_EQ(first["blobs_removed"], 0);
  EXPECT_EQ(first["blobs_kept_young"], 1);
  EXPECT_TRUE(std::filesystem::exists(in_flight)) << "the server's upload in flight must survive";
  auto second = gc({"--grace", "0"});
  EXPECT_EQ(second["blobs_removed"], 1) << second.dump();
  EXPECT_EQ(second["bytes_removed"], content.size());
  EXPECT_EQ(c.Get("/api/kernels/acme/kept")->status, 200);
  EXPECT_EQ(c.Get("/kernels/acme/kept/resolve/main/.gitattributes")->status, 200);
  kill(server.pid, SIGTERM);
  EXPECT_EQ(wait_exit(server.pid), 0);
  close(server.out);
}

}  // namespace
}  // namespace khub::localhub::testing
