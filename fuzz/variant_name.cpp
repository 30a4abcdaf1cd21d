// Variant directory names (build/<variant>/ as kernel-builder writes them, and as the Hub lists them):
// parse_variant, parse_backend, parse_dotted_version. Checks name() == input for every name that
// parses (variant.h: format(parse(x)) == x), and that the rendered name parses to the same value.
#include "fuzz_util.h"
#include "khub/variants/variant.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto in = khub_fuzz::text(data, size);
  (void)khub::variants::parse_backend(in);
  (void)khub::variants::parse_dotted_version(in);
  auto v = khub::variants::parse_variant(in);
  if (!v) return 0;
  auto name = v->name();
  auto again = khub::variants::parse_variant(name);
  if (!again) khub_fuzz::invariant_failed("the rendered name of a parsed variant does not parse");
  if (!(*again == *v)) khub_fuzz::invariant_failed("parse(name(v)) != v");
  return 0;
}
