#include "khub/xet/reconstruction.h"

#include <limits>
#include <optional>

#include "khub/json/fields.h"

namespace khub::xet {
namespace {

using json_fields::Json;

Json range_json(std::uint64_t start, std::uint64_t end) { return Json{{"start", start}, {"end", end}}; }

std::optional<std::uint64_t> unsigned_field(const Json& j, const char* key,
                                            std::uint64_t max = std::numeric_limits<std::uint32_t>::max()) {
  const Json& f = json_fields::field(j, key);
  if (!f.is_number_unsigned() && !(f.is_number_integer() && f.get<std::int64_t>() >= 0)) return std::nullopt;
  const auto v = f.get<std::uint64_t>();
  if (v > max) return std::nullopt;
  return v;
}

Error bad_answer(const std::string& what) {
  return Error(ErrorCode::Protocol, "xet reconstruction answer: " + what);
}

}  // namespace

std::string to_json(const Reconstruction& r) {
  Json terms = Json::array();
  for (const auto& t : r.terms)
    terms.push_back({{"hash", t.xorb.str()},
                     {"unpacked_length", t.unpacked_length},
                     {"range", range_json(t.chunk_start, t.chunk_end)}});
  Json fetch = Json::object();
  for (const auto& [xorb, entries] : r.fetch_info) {
    Json list = Json::array();
    for (const auto& e : entries)
      list.push_back({{"range", range_json(e.chunk_start, e.chunk_end)},
                      {"url", e.url},
                      {"url_range", range_json(e.byte_start, e.byte_end)}});
    fetch[xorb.str()] = std::move(list);
  }
  return Json{{"offset_into_first_range", r.offset_into_first_range}, {"terms", std::move(terms)},
              {"fetch_info", std::move(fetch)}}
      .dump();
}

Expected<Reconstruction> parse_reconstruction(std::string_view text) {
  const Json j = json_fields::parse_untrusted(text, 8);
  if (!j.is_object()) return bad_answer("not a JSON object");
  Reconstruction r;
  const auto offset = unsigned_field(j, "offset_into_first_range", std::numeric_limits<std::uint64_t>::max());
  if (!offset) return bad_answer("offset_into_first_range missing or not a number");
  r.offset_into_first_range = *offset;
  for (const Json& t : json_fields::array(j, "terms")) {
    const auto xorb = parse_hash(json_fields::text(t, "hash"));
    const Json& range = json_fields::object(t, "range");
    const auto length = unsigned_field(t, "unpacked_length");
    const auto start = unsigned_field(range, "start"), end = unsigned_field(range, "end");
    if (!xorb || !length || !start || !end || *start >= *end)
      return bad_answer("a term without a xorb hash, length or chunk range");
    r.terms.push_back({*xorb, static_cast<std::uint32_t>(*length), static_cast<std::uint32_t>(*start),
                       static_cast<std::uint32_t>(*end)});
  }
  for (const auto& [key, list] : json_fields::object(j, "fetch_info").items()) {
    const auto xorb = parse_hash(key);
    if (!xorb || !list.is_array()) return bad_answer("fetch_info entry " + key.substr(0, 64));
    auto& entries = r.fetch_info[*xorb];
    for (const Json& e : list) {
      const Json& range = json_fields::object(e, "range");
      const Json& bytes = json_fields::object(e, "url_range");
      const auto cs = unsigned_field(range, "start"), ce = unsigned_field(range, "end");
      const auto bs = unsigned_field(bytes, "start", std::numeric_limits<std::uint64_t>::max());
      const auto be = unsigned_field(bytes, "end", std::numeric_limits<std::uint64_t>::max());
      std::string url = json_fields::text(e, "url");
      if (!cs || !ce || !bs || !be || *cs >= *ce || *bs > *be || url.empty())
        return bad_answer("a fetch entry without a URL, chunk range or byte range");
      entries.push_back({static_cast<std::uint32_t>(*cs), static_cast<std::uint32_t>(*ce), std::move(url), *bs, *be});
    }
  }
  for (const auto& t : r.terms) {
    bool covered = false;
    if (auto it = r.fetch_info.find(t.xorb); it != r.fetch_info.end())
      for (const auto& e : it->second) covered |= e.chunk_start <= t.chunk_start && t.chunk_end <= e.chunk_end;
    if (!covered) return bad_answer("no fetch entry covers term of xorb " + t.xorb.str());
  }
  return r;
}

}  // namespace khub::xet
