// metadata.json of a variant (downloaded from any Hub repo): parse_metadata, then the documented
// round trip parse_metadata(serialize_metadata(m)) == m.
#include "fuzz_util.h"
#include "khub/protocol/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto m = khub::protocol::parse_metadata(khub_fuzz::text(data, size));
  if (!m) return 0;
  auto text = khub::protocol::serialize_metadata(*m);
  auto again = khub::protocol::parse_metadata(text);
  if (!again) khub_fuzz::invariant_failed("serialize_metadata output does not parse");
  if (!(*again == *m)) khub_fuzz::invariant_failed("parse_metadata(serialize_metadata(m)) != m");
  return 0;
}
