#include "khub/publish/check.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "digest_claims.h"
#include "khub/base/redact.h"
#include "khub/protocol/digest.h"
#include "khub/protocol/metadata.h"
#include "khub/publish/abi_check.h"
#include "khub/variants/variant.h"

namespace khub::publish {
namespace {

namespace fs = std::filesystem;

class Checker {
 public:
  Checker(const BuildTree& tree, const CheckOptions& options) : tree_(tree), options_(options) {}

  CheckReport run() {
    std::map<std::uint64_t, std::vector<std::string>> versions;
    for (const auto& v : tree_.variants) {
      report_.variants.push_back(v.name);
      auto m = check_variant(v);
      if (m) versions[m->version].push_back(v.name);
    }
    if (versions.size() > 1) {
      std::string list;
      for (const auto& [version, names] : versions) {
        list += (list.empty() ? "" : ", ") + std::to_string(version) + " (" + names.front() +
                (names.size() > 1 ? " and " + std::to_string(names.size() - 1) + " more" : "") + ")";
      }
      add("", "version", "Found multiple versions in build variants: " + list);
    }
    return std::move(report_);
  }

 private:
  void add(std::string file, std::string check, std::string message, Severity s = Severity::Error) {
    report_.findings.push_back({std::move(file), std::move(check), std::move(message), s});
  }

  // A file name with a line break or another control character would become a repo path that
  // breaks the NDJSON commit, listings and terminals: refused before anything reaches the Hub.
  void check_file_names(const VariantDir& v) {
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(v.path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      const std::string rel = it->path().lexically_relative(v.path).generic_string();
      const bool control = std::any_of(rel.begin(), rel.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
      if (control || rel.find('\\') != std::string::npos)
        add(v.name + "/" + one_printable_line(rel, 200), "name",
            "file name contains a control character or a backslash; rename it");
    }
  }

  std::optional<protocol::KernelMetadata> check_variant(const VariantDir& v) {
    auto variant = variants::parse_variant(v.name);
    if (!variant) add(one_printable_line(v.name, 200), "variant-name", variant.error().message);
    check_file_names(v);
    auto m = protocol::read_metadata(v.path / "metadata.json");
    if (!m) {
      add(v.name + "/metadata.json", "metadata", m.error().message);
      check_elf_files(v, nullptr);
      return std::nullopt;
    }
    if (m->is_dirty()) {
      add(v.name + "/metadata.json", "provenance", "built from a dirty git tree; the recorded revision does not "
          "fully identify the sources", Severity::Warning);
    }
    check_python_depends(v, *m);
    if (variant) check_backend(v, *m, *variant);
    check_layout(v, *m, variant ? &*variant : nullptr);
    if (!m->digest) {
      add(v.name + "/metadata.json", "digest", "metadata.json has no digest; run `khub hash` first");
    } else if (auto st = protocol::verify_digest(v.path, *m->digest, options_.digest_hashes,
                                                 options_.digest_claims ? detail::claim_rule(v.path, *m->digest)
                                                                        : protocol::DigestClaim{});
               !st) {
      // One finding per violation line (the first line is the "does not match" header).
      std::istringstream lines(st.error().message);
      std::string line;
      std::getline(lines, line);
      bool any = false;
      while (std::getline(lines, line)) {
        add(v.name, "digest", line);
        any = true;
      }
      if (!any) add(v.name, "digest", st.error().message);
    }
    check_elf_files(v, &*m);
    return std::move(m).value();
  }

  // kernels' python-depends allow-list: names from the general table or the variant backend's table.
  void check_python_depends(const VariantDir& v, const protocol::KernelMetadata& m) {
    static const std::set<std::string> kGeneral = {"einops", "helion", "tvm-ffi"};
    static const std::map<protocol::BackendType, std::set<std::string>> kBackend = {
        {protocol::BackendType::Cuda, {"nvidia-cutlass-dsl"}},
        {protocol::BackendType::Neuron, {"nki"}},
        {protocol::BackendType::Xpu, {"onednn"}},
    };
    for (const auto& dep : m.python_depends) {
      auto it = kBackend.find(m.backend.type);
      if (kGeneral.contains(dep) || (it != kBackend.end() && it->second.contains(dep))) continue;
      add(v.name + "/metadata.json", "python-depends",
          "Kernel module `" + m.python_name() + "` uses unsupported kernel dependency: " + dep);
    }
  }

  // The name's backend decides which hosts choose the variant; metadata.json's says what was built.
  void check_backend(const VariantDir& v, const protocol::KernelMetadata& m, const variants::Variant& variant) {
    const std::string built(protocol::to_string(m.backend.type));
    if (variant.is_arch()) {
      const std::string named(variant.arch->backend.name());
      if (named != built)
        add(v.name, "backend", "the name says backend " + named + " but metadata.json says " + built);
      return;
    }
    const std::string& named = variant.noarch->backend_name;
    const bool known = named == "npu" || variants::backend_kind_from_name(named).has_value();
    const std::string built_noarch = m.backend.type == protocol::BackendType::Cann ? "npu" : built;
    if (!known && !variant.noarch->is_universal()) {
      add(v.name, "backend", "'" + named + "' is not a backend: no host will choose this variant (torch-" +
                                 built_noarch + " for metadata.json's backend)");
    } else if (known && named != built_noarch) {
      add(v.name, "backend", "the name says backend " + named + " but metadata.json says " + built);
    }
  }

  void check_layout(const VariantDir& v, const protocol::KernelMetadata& m, const variants::Variant* variant) {
    if (!variant || !variant->is_arch()) return;
    if (!fs::exists(v.path / "__init__.py")) add(v.name, "layout", "missing __init__.py");
    const bool tvm = variant->arch->framework.kind == variants::FrameworkKind::TvmFfi;
    const std::string os = variant->arch->os;
    std::string expected = m.id + (tvm ? (os == "darwin" ? ".dylib" : os == "windows" ? ".dll" : ".so")
                                       : (os == "windows" ? ".pyd" : ".abi3.so"));
    if (!fs::exists(v.path / expected)) {
      add(v.name, "layout", "native module " + expected + " not found (metadata id `" + m.id + "`)");
    }
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(v.path, ec)) {
      std::string f = e.path().filename().string();
      bool native = f.ends_with(".so") || f.ends_with(".pyd") || f.ends_with(".dylib") || f.ends_with(".dll");
      if (native && f != expected) {
        add(v.name + "/" + f, "namespace", "native module stem does not match metadata id `" + m.id + "`");
      }
    }
  }

  void check_namespace(const std::string& rel, const ElfInfo& elf, const std::string& id) {
    auto namespaces = torch_library_namespaces(elf);
    for (const auto& ns : namespaces) {
      if (ns != id) add(rel, "namespace", "registers op namespace `" + ns + "`, expected `" + id + "` (metadata id)");
    }
    for (const auto& mod : python_module_names(elf)) {
      if (mod != id) add(rel, "namespace", "exports PyInit_" + mod + ", expected PyInit_" + id);
    }
    if (namespaces.empty()) {
      bool has_string = std::find(elf.rodata_strings.begin(), elf.rodata_strings.end(), id) != elf.rodata_strings.end();
      if (!has_string) {
        add(rel, "namespace", "no TORCH_LIBRARY registration for namespace `" + id + "` found");
      }
    }
  }

  void check_elf_files(const VariantDir& v, const protocol::KernelMetadata* m) {
    if (!options_.abi) return;
    auto variant = variants::parse_variant(v.name);
    if (variant && variant->is_arch() && variant->arch->os != "linux") return;  // ELF rules are Linux-only
    std::error_code ec;
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(v.path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      auto name = it->path().filename().string();
      if (it->is_regular_file() && (name.ends_with(".so") || name.find(".so.") != std::string::npos)) {
        files.push_back(it->path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      std::string rel = v.name + "/" + file.lexically_relative(v.path).generic_string();
      report_.files_checked.push_back(rel);
      auto elf = read_elf(file);
      if (!elf) {
        add(rel, "elf", elf.error().message);
        continue;
      }
      auto manylinux = check_manylinux(*elf, options_.manylinux);
      if (manylinux) {
        for (const auto& x : *manylinux) {
          add(rel, "manylinux", x.symbol + "@" + x.dep + "_" + x.version + " is not allowed by " + options_.manylinux);
        }
      }
      for (const auto& x : check_abi3(*elf, options_.python_abi_major, options_.python_abi_minor)) {
        add(rel, "abi3", x.describe() + (x.added ? " (abi3 target " + std::to_string(options_.python_abi_major) + "." +
                                                     std::to_string(options_.python_abi_minor) + ")"
                                                : ""));
      }
      for (const auto& lib : disallowed_libraries(*elf)) {
        add(rel, "libraries", "links " + lib + ", which is neither on the manylinux_2_28 list nor part of the Torch runtime");
      }
      if (variant && variant->is_arch() &&
          variant->arch->framework.kind == variants::FrameworkKind::TorchStableAbi) {
        // The variant's name is its target: torch-stable-abi210 = any torch >= 2.10.
        const auto& target = variant->arch->framework.version;
        for (const auto& x : check_torch_stable_abi(*elf, target.major, target.minor)) {
          add(rel, "torch-stable-abi", x.describe());
        }
      }
      if (m && variant && variant->is_arch() && file.parent_path() == v.path &&
          file.filename() == m->id + ".abi3.so") {
        check_namespace(rel, *elf, m->id);
      }
    }
  }

  const BuildTree& tree_;
  const CheckOptions& options_;
  CheckReport report_;
};

}  // namespace

bool CheckReport::ok() const { return error_count() == 0; }

std::size_t CheckReport::error_count() const {
  return static_cast<std::size_t>(std::count_if(findings.begin(), findings.end(),
                                                [](const Finding& f) { return f.severity == Severity::Error; }));
}

Expected<CheckReport> check_build(const BuildTree& tree, const CheckOptions& options) {
  if (options.abi && options.manylinux != "manylinux_2_28") {
    return Error(ErrorCode::Unsupported, "unsupported manylinux policy `" + options.manylinux + "`",
                 "khub checks manylinux_2_28 only");
  }
  return Checker(tree, options).run();
}

Status require_clean(const CheckReport& report, const std::filesystem::path& dir) {
  if (report.ok()) return {};
  const std::string where = dir.empty() ? "<dir>" : dir.string();
  const auto is_error = [](const Finding& f) { return f.severity == Severity::Error; };
  const bool abi_only = std::all_of(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
    return !is_error(f) || f.check == "manylinux" || f.check == "abi3" || f.check == "libraries" ||
           f.check == "torch-stable-abi";
  });
  const bool digest = std::any_of(report.findings.begin(), report.findings.end(),
                                  [&](const Finding& f) { return is_error(f) && f.check == "digest"; });
  std::string hint = "run `khub check " + where + "` for the full report";
  if (digest) hint = "run `khub hash " + where + "` after the last change to a variant; " + hint;
  if (abi_only) hint += ", or push with `--abi-check warn` to publish anyway";
  Error err(abi_only ? ErrorCode::AbiViolation : ErrorCode::InvalidMetadata,
            "build check failed: " + std::to_string(report.error_count()) + " problem(s) in " +
                std::to_string(report.variants.size()) + " variant(s)",
            hint);
  constexpr std::size_t kShown = 8;  // the rest is in `khub check`'s report
  for (const auto& f : report.findings) {
    if (!is_error(f)) continue;
    if (err.notes.size() == kShown) {
      err.notes.push_back("… and " + std::to_string(report.error_count() - kShown) + " more");
      break;
    }
    err.notes.push_back((f.file.empty() ? "" : f.file + ": ") + f.message);
  }
  return err;
}

}  // namespace khub::publish
