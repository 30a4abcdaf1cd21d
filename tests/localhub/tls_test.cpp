// khub serve over HTTPS (--tls-cert / --tls-key): a throw-away CA made here with the openssl CLI signs
// the server's certificate; a client trusting that CA gets the Hub's answers, with https base URLs.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "khub/localhub/server.h"
#include "test_support.h"

namespace khub::localhub::testing {
namespace {

bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// A throw-away CA in `d` (ca.pem) and a certificate it signed for 127.0.0.1 (server.pem, server.key).
::testing::AssertionResult make_ca_and_server_certificate(const std::string& d) {
  const bool made =
      sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj '/CN=khub test CA' -keyout " + d + "/ca.key -out " +
         d + "/ca.pem") &&
      sh("openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout " + d + "/server.key -out " + d +
         "/server.csr") &&
      sh("printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > " + d + "/ext.cnf && openssl x509 -req -in " + d +
         "/server.csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -days 1 -extfile " + d +
         "/ext.cnf -out " + d + "/server.pem");
  return made ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "openssl could not make the certificates";
}

ServerOptions tls_server_options(const TempDir& dir) {
  ServerOptions o;
  o.root = dir.path / "store";
  o.tls_cert = dir.path / "server.pem";
  o.tls_key = dir.path / "server.key";
  return o;
}

TEST(TlsTest, ServesHttpsWithACertificateFromAThrowAwayCa) {
  TempDir dir("tls");
  const std::string d = dir.path.string();
  ASSERT_TRUE(make_ca_and_server_certificate(d));
  Server server(tls_server_options(dir));
  auto st = server.start();
  ASSERT_TRUE(st) << st.error().message;
  EXPECT_EQ(server.url(), "https://127.0.0.1:" + std::to_string(server.port()));

  httplib::SSLClient client("127.0.0.1", server.port());
  client.set_ca_cert_path((d + "/ca.pem").c_str());
  client.enable_server_certificate_verification(true);
  auto created = client.Post("/api/repos/create", R"({"type":"model","name":"tls","organization":"acme"})",
                             "application/json");
  ASSERT_TRUE(created) << httplib::to_string(created.error());
  ASSERT_EQ(created->status, 200) << created->body;
  EXPECT_NE(created->body.find("https://127.0.0.1:"), std::string::npos) << created->body;  // base URLs say https
  for (int i = 0; i < 3; ++i) {  // keep-alive over one TLS connection
    auto info = client.Get("/api/models/acme/tls");
    ASSERT_TRUE(info);
    EXPECT_EQ(info->status, 200);
  }
  auto missing = client.Get("/api/models/acme/none");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->get_header_value("X-Error-Code"), "RepoNotFound");

  // A client that does not trust the CA is refused; plain HTTP to the TLS port gets no answer.
  httplib::SSLClient untrusting("127.0.0.1", server.port());
  untrusting.set_ca_cert_path("/dev/null");
  untrusting.enable_server_certificate_verification(true);
  EXPECT_FALSE(untrusting.Get("/api/models/acme/tls"));
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(2, 0);
  auto p = plain.Get("/api/models/acme/tls");
  EXPECT_TRUE(!p || p->status != 200);
  server.stop();
}

struct CliRun {
  int exit_code = -1;
  std::string err;
};

CliRun khub_with_env(const std::string& env, const std::string& args, const TempDir& dir) {
  const std::string err = (dir.path / "stderr.txt").string();
  const int rc = std::system(("env -u SSL_CERT_FILE -u SSL_CERT_DIR " + env + " '" + KHUB_CLI + "' " + args + " >/dev/null 2>" + err).c_str());
  std::ifstream in(err);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, std::string(std::istreambuf_iterator<char>(in), {})};
}

// The khub client (and khub push, through the same environment reader) trusts a private CA as huggingface_hub and hf_xet do: through
// SSL_CERT_FILE or SSL_CERT_DIR. Without it the certificate is refused at once (not retried), with
// a hint naming the variable.
TEST(TlsTest, KhubTrustsAPrivateCaThroughSslCertFileOrDir) {
  TempDir dir("tls-client");
  const std::string d = dir.path.string();
  ASSERT_TRUE(make_ca_and_server_certificate(d));
  ASSERT_TRUE(sh("mkdir " + d + "/cas && cp " + d + "/ca.pem " + d + "/cas/ && openssl rehash " + d + "/cas"));
  Server server(tls_server_options(dir));
  ASSERT_TRUE(server.start());
  httplib::SSLClient client("127.0.0.1", server.port());
  client.set_ca_cert_path((d + "/ca.pem").c_str());
  auto created = client.Post("/api/repos/create", R"({"type":"model","name":"tls","organization":"acme"})",
                             "application/json");
  ASSERT_TRUE(created && created->status == 200);

  const std::string hub = "HF_ENDPOINT=" + server.url() + " HF_HOME=" + d + "/hf-home ";
  const std::string download = "download acme/tls --repo-type model --all --cache-dir " + d + "/cache";
  const auto untrusted = khub_with_env(hub, download, dir);
  EXPECT_EQ(untrusted.exit_code, 1) << untrusted.err;
  EXPECT_NE(untrusted.err.find("SSL_CERT_FILE"), std::string::npos) << untrusted.err;
  EXPECT_EQ(untrusted.err.find("retry"), std::string::npos) << "a certificate failure is not retried: " << untrusted.err;

  const auto by_file = khub_with_env(hub + "SSL_CERT_FILE=" + d + "/ca.pem", download, dir);
  EXPECT_EQ(by_file.exit_code, 0) << by_file.err;
  const auto by_dir = khub_with_env(hub + "SSL_CERT_DIR=" + d + "/cas", download, dir);
  EXPECT_EQ(by_dir.exit_code, 0) << by_dir.err;
  server.stop();
}

TEST(TlsTest, ACertificateWithoutItsKeyIsRefused) {
  TempDir dir("tls-half");
  ServerOptions o;
  o.root = dir.path / "store";
  o.tls_cert = dir.path / "server.pem";
  Server server(o);
  auto st = server.start();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace khub::localhub::testing
