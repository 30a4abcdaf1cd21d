// metadata.json writing: the exact bytes kernel-builder's serde_json::to_string_pretty produces.
#include <nlohmann/json.hpp>

#include "khub/base/fs.h"
#include "khub/protocol/metadata.h"

namespace khub::protocol {
namespace {

using OrderedJson = nlohmann::ordered_json;

OrderedJson to_json(const Provenance& p) {
  OrderedJson builder = OrderedJson::object();
  builder["version"] = p.kernel_builder.version;
  if (p.kernel_builder.commit) builder["commit"] = *p.kernel_builder.commit;
  if (p.kernel_builder.dirty) builder["dirty"] = *p.kernel_builder.dirty;
  OrderedJson out = OrderedJson::object();
  out["kernel-builder"] = std::move(builder);
  if (p.kernel) {
    OrderedJson k = OrderedJson::object();
    k["commit"] = p.kernel->commit;
    k["dirty"] = p.kernel->dirty;
    out["kernel"] = std::move(k);
  }
  return out;
}

}  // namespace

std::string serialize_metadata(const KernelMetadata& m) {
  OrderedJson j = OrderedJson::object();
  j["name"] = m.name;
  j["id"] = m.id;
  j["version"] = m.version;
  j["license"] = m.license;
  if (m.upstream) j["upstream"] = *m.upstream;
  if (m.source) j["source"] = *m.source;
  j["python-depends"] = m.python_depends;
  OrderedJson deps = OrderedJson::array();
  for (const auto& d : m.kernel_depends) {
    OrderedJson e = OrderedJson::object();
    e["repo-id"] = d.repo_id;
    if (d.version) e["version"] = *d.version;
    if (d.revision) e["revision"] = *d.revision;
    deps.push_back(std::move(e));
  }
  j["kernel-depends"] = std::move(deps);
  OrderedJson backend = OrderedJson::object();
  backend["type"] = std::string(to_string(m.backend.type));
  if (m.backend.archs) backend["archs"] = *m.backend.archs;
  j["backend"] = std::move(backend);
  if (m.digest) {
    OrderedJson d = OrderedJson::object();
    d["algorithm"] = std::string(to_string(m.digest->algorithm));
    OrderedJson files = OrderedJson::object();
    for (const auto& [path, hash] : m.digest->files) files[path] = hash;  // std::map: sorted bytewise
    d["files"] = std::move(files);
    j["digest"] = std::move(d);
  }
  if (m.provenance) j["provenance"] = to_json(*m.provenance);
  // serde_json pretty: 2 spaces, "key": value, UTF-8 kept, no trailing newline.
  return j.dump(2, ' ', false, OrderedJson::error_handler_t::replace);
}

Status write_metadata(const std::filesystem::path& path, const KernelMetadata& metadata) {
  return write_file_atomic(path, serialize_metadata(metadata));
}

}  // namespace khub::protocol
