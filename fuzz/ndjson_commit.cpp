// NDJSON commits (POST /api/{type}s/{repo}/commit/{rev}, the body `huggingface_hub` sends): the
// commit parser of localhub/src/routes_commit.cpp (header line, file / lfsFile / deletedFile /
// deletedFolder lines, base64 content, paths), reached through the route table against an
// in-process store (localhub_harness.h). The whole input is the request body.
#include "localhub_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  httplib::Headers headers{{"Content-Type", "application/x-ndjson"},
                           {"Content-Length", std::to_string(size)}};
  (void)khub_fuzz::serve("POST", "/api/models/fuzz/repo/commit/main", headers, khub_fuzz::text(data, size));
  return 0;
}
