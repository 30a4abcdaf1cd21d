#include "khub/protocol/build_config.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "khub/base/fs.h"

namespace khub::protocol {
namespace {

Error config_error(std::string message) { return Error(ErrorCode::InvalidMetadata, std::move(message)); }

Status only_keys(const toml::table& t, std::string_view where, std::initializer_list<std::string_view> keys) {
  for (const auto& [k, v] : t) {
    if (std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
      return config_error("unknown field `" + std::string(k.str()) + "` in [" + std::string(where) + "]");
    }
  }
  return {};
}

Expected<std::vector<std::string>> string_list(const toml::table& t, std::string_view key, std::string_view where) {
  std::vector<std::string> out;
  const auto* node = t.get(key);
  if (!node) return out;
  const auto* arr = node->as_array();
  if (!arr) return config_error("`" + std::string(key) + "` in [" + std::string(where) + "] must be an array of strings");
  for (const auto& e : *arr) {
    auto s = e.value<std::string>();
    if (!s) return config_error("`" + std::string(key) + "` in [" + std::string(where) + "] must be an array of strings");
    out.push_back(*s);
  }
  return out;
}

Expected<std::optional<std::string>> opt_string(const toml::table& t, std::string_view key, std::string_view where) {
  const auto* node = t.get(key);
  if (!node) return std::optional<std::string>{};
  auto s = node->value<std::string>();
  if (!node->is_string() || !s) return config_error("`" + std::string(key) + "` in [" + std::string(where) + "] must be a string");
  return std::optional<std::string>(*s);
}

Expected<std::vector<KernelDependency>> kernel_deps(const toml::table& t, std::string_view where) {
  std::vector<KernelDependency> out;
  const auto* node = t.get("kernel-depends");
  if (!node) return out;
  const auto* arr = node->as_array();
  if (!arr) return config_error("`kernel-depends` in [" + std::string(where) + "] must be an array");
  for (const auto& e : *arr) {
    const auto* d = e.as_table();
    if (!d) return config_error("`kernel-depends` entries must be inline tables");
    KHUB_CHECK(only_keys(*d, "kernel-depends", {"repo-id", "version", "revision"}));
    KernelDependency dep;
    auto repo = d->get("repo-id") ? d->get("repo-id")->value<std::string>() : std::nullopt;
    if (!repo) return config_error("missing field `repo-id` in kernel dependency");
    dep.repo_id = *repo;
    if (const auto* v = d->get("version")) {
      auto n = v->is_integer() ? v->value<std::int64_t>() : std::nullopt;
      if (!n || *n < 0) return config_error("kernel dependency `version` must be an integer >= 0");
      dep.version = static_cast<std::uint64_t>(*n);
    }
    if (const auto* r = d->get("revision")) {
      if (!r->is_string()) return config_error("kernel dependency `revision` must be a string");
      dep.revision = *r->value<std::string>();
    }
    if (dep.version.has_value() == dep.revision.has_value()) {
      return config_error("kernel dependency `" + dep.repo_id + "` needs exactly one of `version` or `revision`");
    }
    out.push_back(std::move(dep));
  }
  return out;
}

Status read_general(const toml::table& g, BuildConfig& c, bool v4) {
  if (v4) {
    KHUB_CHECK(only_keys(g, "general", {"name", "version", "license", "backends", "upstream", "source",
                                        "python-depends", "hub", "cuda", "xpu", "neuron"}));
  } else {
    KHUB_CHECK(only_keys(g, "general", {"name", "version", "edition", "license", "backends", "upstream", "source",
                                        "python-depends", "kernel-depends", "hub", "cuda", "xpu", "neuron",
                                        "tpu"}));
  }
  auto name = g.get("name") ? g.get("name")->value<std::string>() : std::nullopt;
  if (!name) return config_error("missing field `name` in [general]");
  if (!is_valid_kernel_name(*name)) return config_error("invalid kernel name `" + *name + "` in [general]");
  c.name = *name;
  const auto* version = g.get("version");
  if (!version) return config_error("missing field `version` in [general]");
  auto n = version->is_integer() ? version->value<std::int64_t>() : std::nullopt;
  if (!n || *n < 0) return config_error("`version` in [general] must be an integer >= 0");
  c.version = static_cast<std::uint64_t>(*n);
  auto license = g.get("license") ? g.get("license")->value<std::string>() : std::nullopt;
  if (!license) return config_error("missing field `license` in [general]");
  c.license = *license;
  if (!g.get("backends")) return config_error("missing field `backends` in [general]");
  KHUB_TRY(c.backends, string_list(g, "backends", "general"));
  for (const auto& b : c.backends) {
    if (!parse_backend_type(b)) return config_error("unknown backend `" + b + "` in [general] backends");
  }
  KHUB_TRY(c.upstream, opt_string(g, "upstream", "general"));
  KHUB_TRY(c.source, opt_string(g, "source", "general"));
  for (const auto* url : {&c.upstream, &c.source}) {
    if (*url) {
      KHUB_CHECK(validate_git_url(**url));
    }
  }
  KHUB_TRY(c.python_depends, string_list(g, "python-depends", "general"));
  KHUB_TRY(c.kernel_depends, kernel_deps(g, "general"));
  if (const auto* hub = g.get_as<toml::table>("hub")) {
    KHUB_CHECK(only_keys(*hub, "general.hub", {"repo-id", "branch"}));
    KHUB_TRY(c.hub_repo_id, opt_string(*hub, "repo-id", "general.hub"));
    KHUB_TRY(c.hub_branch, opt_string(*hub, "branch", "general.hub"));
  }
  for (std::string_view backend : {"cuda", "xpu", "neuron", "tpu"}) {
    const auto* t = g.get_as<toml::table>(backend);
    if (!t) continue;
    std::string where = "general." + std::string(backend);
    if (backend == "cuda") {
      KHUB_CHECK(only_keys(*t, where, {"minver", "maxver", "python-depends", "kernel-depends"}));
    } else if (backend == "tpu") {
      KHUB_CHECK(only_keys(*t, where, {"python-depends"}));
    } else {
      KHUB_CHECK(only_keys(*t, where, {"python-depends", "kernel-depends"}));
    }
    KHUB_TRY(c.backend_python_depends[std::string(backend)], string_list(*t, "python-depends", where));
    if (backend != "tpu") {
      KHUB_TRY(auto deps, kernel_deps(*t, where));
      if (!deps.empty()) c.backend_kernel_depends[std::string(backend)] = std::move(deps);
    }
  }
  return {};
}

Status read_framework(const toml::table& root, BuildConfig& c) {
  int count = 0;
  if (const auto* t = root.get_as<toml::table>("torch")) {
    ++count;
    c.framework = FrameworkSection::Torch;
    KHUB_CHECK(only_keys(*t, "torch", {"src", "include", "pyext", "minver", "maxver", "stable-abi", "cxx-flags"}));
    KHUB_TRY(c.framework_src, string_list(*t, "src", "torch"));
    if (t->get("pyext")) {
      KHUB_TRY(c.pyext, string_list(*t, "pyext", "torch"));
    }
    if (const auto* s = t->get("stable-abi"); s && s->is_string()) c.stable_abi = *s->value<std::string>();
  }
  if (const auto* t = root.get_as<toml::table>("torch-noarch")) {
    ++count;
    c.framework = FrameworkSection::TorchNoarch;
    KHUB_CHECK(only_keys(*t, "torch-noarch", {"pyext", "cuda_capabilities", "rocm_archs", "cuda-capabilities",
                                              "rocm-archs"}));
    if (t->get("pyext")) {
      KHUB_TRY(c.pyext, string_list(*t, "pyext", "torch-noarch"));
    }
    auto key = t->get("cuda_capabilities") ? "cuda_capabilities" : "cuda-capabilities";
    KHUB_TRY(c.noarch_cuda_capabilities, string_list(*t, key, "torch-noarch"));
  }
  if (const auto* t = root.get_as<toml::table>("tvm-ffi")) {
    ++count;
    c.framework = FrameworkSection::TvmFfi;
    KHUB_CHECK(only_keys(*t, "tvm-ffi", {"src", "include", "pyext", "cxx-flags"}));
    if (!t->get("src")) return config_error("missing field `src` in [tvm-ffi]");
    KHUB_TRY(c.framework_src, string_list(*t, "src", "tvm-ffi"));
    if (t->get("pyext")) {
      KHUB_TRY(c.pyext, string_list(*t, "pyext", "tvm-ffi"));
    }
  }
  if (count != 1) {
    return config_error("build.toml needs exactly one of [torch], [torch-noarch] or [tvm-ffi], found " +
                        std::to_string(count));
  }
  return {};
}

Status read_kernels(const toml::table& root, BuildConfig& c) {
  const auto* kernels = root.get_as<toml::table>("kernel");
  if (!kernels) return {};
  for (const auto& [name, node] : *kernels) {
    const auto* t = node.as_table();
    std::string where = "kernel." + std::string(name.str());
    if (!t) return config_error("[" + where + "] must be a table");
    KHUB_CHECK(only_keys(*t, where, {"backend", "depends", "src", "include", "cxx-flags", "cuda-capabilities",
                                     "cuda-flags", "cuda-minver", "rocm-archs", "hip-flags", "sycl-flags"}));
    KernelComponent k;
    auto backend = t->get("backend") ? t->get("backend")->value<std::string>() : std::nullopt;
    if (!backend) return config_error("missing field `backend` in [" + where + "]");
    static const std::set<std::string> kKernelBackends = {"cpu", "cuda", "metal", "rocm", "xpu"};
    if (!kKernelBackends.contains(*backend)) return config_error("unknown backend `" + *backend + "` in [" + where + "]");
    k.backend = *backend;
    if (!t->get("depends")) return config_error("missing field `depends` in [" + where + "]");
    if (!t->get("src")) return config_error("missing field `src` in [" + where + "]");
    KHUB_TRY(k.depends, string_list(*t, "depends", where));
    KHUB_TRY(k.src, string_list(*t, "src", where));
    KHUB_TRY(k.include, string_list(*t, "include", where));
    KHUB_TRY(k.cuda_capabilities, string_list(*t, "cuda-capabilities", where));
    KHUB_TRY(k.rocm_archs, string_list(*t, "rocm-archs", where));
    c.kernels.emplace(std::string(name.str()), std::move(k));
  }
  return {};
}

}  // namespace

std::string BuildConfig::python_name() const {
  std::string out = name;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::vector<KernelDependency> BuildConfig::kernel_depends_for(std::string_view backend) const {
  std::vector<KernelDependency> out = kernel_depends;
  if (auto it = backend_kernel_depends.find(std::string(backend)); it != backend_kernel_depends.end())
    out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

std::vector<std::string> BuildConfig::cuda_archs() const {
  std::set<std::string> all;
  for (const auto& [name, k] : kernels) {
    if (k.backend == "cuda") all.insert(k.cuda_capabilities.begin(), k.cuda_capabilities.end());
  }
  return {all.begin(), all.end()};
}

Expected<BuildConfig> parse_build_config(std::string_view text) {
  toml::table root;
  try {
    root = toml::parse(text);
  } catch (const toml::parse_error& err) {
    return config_error("cannot parse build.toml: " + std::string(err.description()) + " at line " +
                        std::to_string(err.source().begin.line) + " column " +
                        std::to_string(err.source().begin.column));
  }
  KHUB_CHECK(only_keys(root, "build.toml", {"general", "torch", "torch-noarch", "tvm-ffi", "kernel"}));
  const auto* general = root.get_as<toml::table>("general");
  if (!general) return config_error("missing table [general]");
  BuildConfig c;
  c.pyext = {"py", "pyi"};
  bool v4 = false;
  if (const auto* e = general->get("edition")) {
    // value<int64_t>() of a float casts it unchecked (undefined beyond int64: `edition = 1e300`).
    auto n = e->is_integer() ? e->value<std::int64_t>() : std::nullopt;
    if (!n || *n != 5) {
      return config_error("unsupported build edition " + (n ? std::to_string(*n) : std::string("?")) +
                          "; upgrade kernel-builder");
    }
  } else {
    v4 = true;
    c.edition = 4;
    c.warnings.push_back(
        "build.toml uses the legacy v4 format; upgrading to edition 5 in memory. Run kernel-builder "
        "update-build to persist the upgrade.");
  }
  KHUB_CHECK(read_general(*general, c, v4));
  KHUB_CHECK(read_framework(root, c));
  KHUB_CHECK(read_kernels(root, c));
  return c;
}

Expected<BuildConfig> read_build_config(const std::filesystem::path& path) {
  KHUB_TRY(auto text, read_file(path));
  auto parsed = parse_build_config(text);
  if (!parsed) {
    auto err = std::move(parsed).error();
    err.message = path.string() + ": " + err.message;
    return err;
  }
  return parsed;
}

}  // namespace khub::protocol
