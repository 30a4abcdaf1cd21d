// khub serve over HTTPS (--tls-cert / --tls-key): a throw-away CA made here with the openssl CLI signs
// the server's certificate; a client trusting that CA gets the Hub's answers, with https base URLs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "khub/localhub/server.h"
#include "test_support.h"

namespace khub::localhub::testing {
namespace {

bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

TEST(TlsTest, ServesHttpsWithACertificateFromAThrowAwayCa) {
  TempDir dir("tls");
  const std::string d = dir.path.string();
  ASSERT_TRUE(sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj '/CN=khub test CA' -keyout " + d +
                 "/ca.key -out " + d + "/ca.pem"));
  ASSERT_TRUE(sh("openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout " + d + "/server.key -out " + d +
                 "/server.csr"));
  ASSERT_TRUE(sh("printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > " + d + "/ext.cnf && openssl x509 -req -in " +
                 d + "/server.csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -days 1 -extfile " + d +
                 "/ext.cnf -out " + d + "/server.pem"));
  ServerOptions o;
  o.root = dir.path / "store";
  o.tls_cert = dir.path / "server.pem";
  o.tls_key = dir.path / "server.key";
  Server server(o);
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
