#include "khub/xet/reconstruction.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace khub::xet {
namespace {

Hash named(std::uint8_t seed) {
  Hash h;
  h.bytes.fill(seed);
  return h;
}

TEST(XetReconstruction, JsonRoundTrips) {
  Reconstruction r;
  r.offset_into_first_range = 17;
  r.terms = {{named(1), 500, 0, 3}, {named(2), 70, 4, 5}, {named(1), 300, 3, 4}};
  r.fetch_info[named(1)] = {{0, 4, "http://127.0.0.1:1/x/1?sig=a", 0, 999}};
  r.fetch_info[named(2)] = {{4, 5, "http://127.0.0.1:1/x/2?sig=b", 1000, 1099}};
  const auto back = parse_reconstruction(to_json(r));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->offset_into_first_range, 17u);
  ASSERT_EQ(back->terms.size(), 3u);
  EXPECT_EQ(back->terms[2].xorb, named(1));
  EXPECT_EQ(back->terms[1].chunk_start, 4u);
  EXPECT_EQ(back->fetch_info.at(named(2))[0].byte_end, 1099u);
  EXPECT_EQ(back->fetch_info.at(named(1))[0].url, "http://127.0.0.1:1/x/1?sig=a");
}

TEST(XetReconstruction, HostileAnswersAreProtocolErrors) {
  const std::string h(64, 'a');
  for (const std::string& bad : std::vector<std::string>{
           std::string("[]"),
           std::string("{}"),
           R"({"offset_into_first_range":-1,"terms":[],"fetch_info":{}})",
           R"({"offset_into_first_range":0,"terms":[{"hash":"zz","unpacked_length":1,"range":{"start":0,"end":1}}],"fetch_info":{}})",
           R"({"offset_into_first_range":0,"terms":[{"hash":")" + h + R"(","unpacked_length":1,"range":{"start":1,"end":1}}],"fetch_info":{}})",
           R"({"offset_into_first_range":0,"terms":[{"hash":")" + h + R"(","unpacked_length":1,"range":{"start":0,"end":2}}],"fetch_info":{")" + h + R"(":[{"range":{"start":0,"end":1},"url":"u","url_range":{"start":0,"end":9}}]}})",
           std::string(10000, '[') + std::string(10000, ']'),
       }) {
    auto r = parse_reconstruction(bad);
    ASSERT_FALSE(r) << bad.substr(0, 200);
    EXPECT_EQ(r.error().code, ErrorCode::Protocol);
  }
}

}  // namespace
}  // namespace khub::xet
