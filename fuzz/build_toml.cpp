// build.toml of a kernel-builder project (khub check / pack read it from a checkout): parse_build_config.
#include "fuzz_util.h"
#include "khub/protocol/build_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)khub::protocol::parse_build_config(khub_fuzz::text(data, size));
  return 0;
}
