// metadata.json reading (serde-compatible errors) and writing (serde_json pretty bytes).
#include "khub/protocol/metadata.h"

#include <array>
#include <fstream>
#include <sstream>

#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "serde_reader.h"

namespace khub::protocol {
namespace {

using detail::Json;
using detail::SerdeReader;

constexpr std::array<std::pair<BackendType, std::string_view>, 8> kBackends{{
    {BackendType::Cann, "cann"},
    {BackendType::Cpu, "cpu"},
    {BackendType::Cuda, "cuda"},
    {BackendType::Metal, "metal"},
    {BackendType::Neuron, "neuron"},
    {BackendType::Rocm, "rocm"},
    {BackendType::Tpu, "tpu"},
    {BackendType::Xpu, "xpu"},
}};

std::string kernel_name_error(std::string_view name) {
  return "Invalid kernel name `" + std::string(name) +
         "`. Name must:\n- Start with a lowercase letter (a-z)\n- Contain only lowercase letters, digits, "
         "and dashes\n- End with a lowercase letter or digit\n- Be at least 2 characters long\n"
         "Examples: `my-kernel`, `relu2d`, `flash-attention`";
}

Expected<std::string> commit_hash(const SerdeReader& r, const Json& v, const std::string& ptr) {
  KHUB_TRY(auto s, r.string(v, ptr));
  if ((s.size() != 40 && s.size() != 64) || !is_hex(s)) {
    return r.error_at(ptr, "invalid commit hash `" + s + "`: expected 40 or 64 hexadecimal characters");
  }
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Expected<BackendInfo> read_backend(const SerdeReader& r, const Json& v, const std::string& ptr) {
  BackendInfo out;
  KHUB_CHECK(r.read_struct(v, ptr, "struct BackendInfo", {"type", "archs"}, {"type"}, false,
                           [&](std::string_view key, const Json& fv, const std::string& fp) -> Status {
                             if (key == "type") {
                               KHUB_TRY(auto s, r.string(fv, fp));
                               auto t = parse_backend_type(s);
                               if (!t) {
                                 return r.error_at(fp, "unknown variant `" + s +
                                                           "`, expected one of `cann`, `cpu`, `cuda`, "
                                                           "`metal`, `neuron`, `rocm`, `tpu`, `xpu`",
                                                         SerdeReader::Shift::Exact);
                               }
                               out.type = *t;
                             } else if (!fv.is_null()) {
                               KHUB_TRY(out.archs, r.strings(fv, fp));
                             }
                             return {};
                           }));
  return out;
}

Expected<Digest> read_digest(const SerdeReader& r, const Json& v, const std::string& ptr) {
  Digest out;
  KHUB_CHECK(r.read_struct(
      v, ptr, "struct Digest", {"algorithm", "files"}, {"algorithm", "files"}, false,
      [&](std::string_view key, const Json& fv, const std::string& fp) -> Status {
        if (key == "algorithm") {
          KHUB_TRY(auto s, r.string(fv, fp));
          if (s == "sha256") {
            out.algorithm = DigestAlgorithm::Sha256;
          } else if (s == "sha512") {
            out.algorithm = DigestAlgorithm::Sha512;
          } else {
            return r.error_at(fp, "unknown variant `" + s + "`, expected `sha256` or `sha512`",
                              SerdeReader::Shift::Exact);
          }
          return {};
        }
        if (!fv.is_object()) return r.invalid_type(fv, fp, "a map");
        for (const auto& [path, hash] : fv.items()) {
          KHUB_TRY(out.files[path], r.string(hash, detail::child_pointer(fp, path)));
        }
        return {};
      }));
  return out;
}

Expected<KernelDependency> read_dependency(const SerdeReader& r, const Json& v, const std::string& ptr) {
  KernelDependency dep;
  KHUB_CHECK(r.read_struct(v, ptr, "struct KernelDependency", {"repo-id", "version", "revision"}, {"repo-id"},
                           true, [&](std::string_view key, const Json& fv, const std::string& fp) -> Status {
                             if (key == "repo-id") {
                               KHUB_TRY(dep.repo_id, r.string(fv, fp));
                             } else if (key == "version") {
                               KHUB_TRY(dep.version, r.usize(fv, fp));
                             } else {
                               KHUB_TRY(dep.revision, r.string(fv, fp));
                             }
                             return {};
                           }));
  // kernels' texts (kernels-data `KernelDependency`, as the `kernels` 0.17 client reads it).
  if (dep.version && dep.revision) return r.error_at(ptr, "`version` and `revision` are mutually exclusive");
  if (!dep.version && !dep.revision) return r.error_at(ptr, "either `version` or `revision` must be specified");
  return dep;
}

Expected<Provenance> read_provenance(const SerdeReader& r, const Json& v, const std::string& ptr) {
  Provenance out;
  KHUB_CHECK(r.read_struct(
      v, ptr, "struct Provenance", {"kernel-builder", "kernel"}, {"kernel-builder"}, false,
      [&](std::string_view key, const Json& fv, const std::string& fp) -> Status {
        if (key == "kernel-builder") {
          auto& b = out.kernel_builder;
          // `sha`: the older name of `commit`, which kernels-data still reads (serde alias).
          KHUB_CHECK(r.read_struct(fv, fp, "struct BuilderProvenance", {"version", "commit", "sha", "dirty"},
                                   {"version"}, false,
                                   [&](std::string_view k, const Json& x, const std::string& xp) -> Status {
                                     if (k == "version") {
                                       KHUB_TRY(b.version, r.string(x, xp));
                                     } else if (k == "commit" || k == "sha") {
                                       KHUB_TRY(b.commit, commit_hash(r, x, xp));
                                     } else {
                                       KHUB_TRY(b.dirty, r.boolean(x, xp));
                                     }
                                     return {};
                                   }));
          if (b.commit.has_value() != b.dirty.has_value()) {
            return r.error_at(fp, "kernel-builder provenance needs `commit` and `dirty` together");
          }
          return {};
        }
        if (fv.is_null()) return {};
        SourceProvenance s;
        KHUB_CHECK(r.read_struct(fv, fp, "struct KernelProvenance", {"commit", "sha", "dirty"}, {}, false,
                                 [&](std::string_view k, const Json& x, const std::string& xp) -> Status {
                                   if (k == "dirty") {
                                     KHUB_TRY(s.dirty, r.boolean(x, xp));
                                   } else {
                                     KHUB_TRY(s.commit, commit_hash(r, x, xp));
                                   }
                                   return {};
                                 }));
        if (s.commit.empty()) return r.error_at(fp, "missing field `commit`");
        if (!fv.contains("dirty")) return r.error_at(fp, "missing field `dirty`");
        out.kernel = std::move(s);
        return {};
      }));
  return out;
}

Status read_field(const SerdeReader& r, KernelMetadata& m, std::string_view key, const Json& v,
                  const std::string& ptr) {
  if (key == "name") {
    KHUB_TRY(m.name, r.string(v, ptr));
    if (!is_valid_kernel_name(m.name)) return r.error_at(ptr, kernel_name_error(m.name));
  } else if (key == "id") {
    KHUB_TRY(m.id, r.string(v, ptr));
  } else if (key == "version") {
    KHUB_TRY(m.version, r.usize(v, ptr));
  } else if (key == "license") {
    KHUB_TRY(m.license, r.string(v, ptr));
  } else if (key == "upstream" || key == "source") {
    if (v.is_null()) return {};
    KHUB_TRY(auto url, r.string(v, ptr));
    if (auto ok = validate_git_url(url); !ok) return r.error_at(ptr, ok.error().message, SerdeReader::Shift::Late);
    (key == "upstream" ? m.upstream : m.source) = std::move(url);
  } else if (key == "python-depends") {
    KHUB_TRY(m.python_depends, r.strings(v, ptr));
  } else if (key == "kernel-depends") {
    if (!v.is_array()) return r.invalid_type(v, ptr, "a sequence");
    for (std::size_t i = 0; i < v.size(); ++i) {
      KHUB_TRY(auto dep, read_dependency(r, v[i], ptr + "/" + std::to_string(i)));
      m.kernel_depends.push_back(std::move(dep));
    }
  } else if (key == "backend") {
    KHUB_TRY(m.backend, read_backend(r, v, ptr));
  } else if (key == "digest") {
    if (v.is_null()) return {};
    KHUB_TRY(m.digest, read_digest(r, v, ptr));
  } else if (key == "provenance") {
    if (v.is_null()) return {};
    KHUB_TRY(m.provenance, read_provenance(r, v, ptr));
  }
  return {};
}

}  // namespace

std::string_view to_string(BackendType type) noexcept {
  for (const auto& [t, name] : kBackends) {
    if (t == type) return name;
  }
  return "cpu";
}

std::optional<BackendType> parse_backend_type(std::string_view name) noexcept {
  for (const auto& [t, n] : kBackends) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::string_view to_string(DigestAlgorithm algorithm) noexcept {
  return algorithm == DigestAlgorithm::Sha256 ? "sha256" : "sha512";
}

std::string KernelMetadata::python_name() const {
  std::string out = name;
  for (auto& c : out) {
    if (c == '-') c = '_';
  }
  return out;
}

bool KernelMetadata::is_dirty() const {
  if (!provenance) return false;
  return provenance->kernel_builder.dirty.value_or(false) || (provenance->kernel && provenance->kernel->dirty);
}

bool is_valid_kernel_name(std::string_view name) noexcept {
  if (name.size() < 2) return false;
  auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!lower(name.front())) return false;
  if (!lower(name.back()) && !digit(name.back())) return false;
  for (char c : name) {
    if (!lower(c) && !digit(c) && c != '-') return false;
  }
  return true;
}

namespace {

Expected<KernelMetadata> parse_metadata_text(std::string_view json, bool from_reader) {
  SerdeReader reader(json, from_reader);
  KHUB_TRY(Json doc, reader.parse_document());
  KernelMetadata m;
  static const std::vector<std::string_view> kKnown = {
      "name", "id", "version", "license", "upstream", "source", "python-depends",
      "kernel-depends", "backend", "digest", "provenance"};
  static const std::vector<std::string_view> kRequired = {"name", "id", "version", "license", "python-depends",
                                                          "backend"};
  KHUB_CHECK(reader.read_struct(doc, "", "struct Metadata", kKnown, kRequired, false,
                                [&](std::string_view key, const Json& v, const std::string& ptr) {
                                  return read_field(reader, m, key, v, ptr);
                                }));
  return m;
}

}  // namespace

Expected<KernelMetadata> parse_metadata(std::string_view json) { return parse_metadata_text(json, false); }

Expected<KernelMetadata> read_metadata(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec(errno, std::generic_category());
    return Error(ErrorCode::Io, "Failed to open `\"" + path.string() + "\"`: " + ec.message());
  }
  in.close();
  auto text = read_file(path);
  if (!text) return Error(ErrorCode::InvalidMetadata, "Cannot parse metadata from `\"" + path.string() + "\"`: " +
                                                          text.error().message);
  auto parsed = parse_metadata_text(*text, /*from_reader=*/true);
  if (!parsed) {
    return Error(ErrorCode::InvalidMetadata,
                 "Cannot parse metadata from `\"" + path.string() + "\"`: " + parsed.error().message);
  }
  return parsed;
}

}  // namespace khub::protocol
