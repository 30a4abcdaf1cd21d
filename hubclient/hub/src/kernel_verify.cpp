// Variant choice, metadata and device-arch checks, and verification of a variant directory before
// anything from it is loaded.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include "kernel_internal.h"
#include "khub/base/fs.h"
#include "khub/base/hash.h"
#include "khub/protocol/digest.h"

namespace khub::hub {
namespace fs = std::filesystem;

namespace {

struct ArchEntry {
  int major = 0, minor = 0;
  char suffix = 0;  // 'a', 'f' or 0
  bool ptx = false;
};

std::optional<ArchEntry> parse_arch(std::string_view s) {
  ArchEntry e;
  if (s.ends_with("+PTX")) {
    e.ptx = true;
    s.remove_suffix(4);
  }
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
    e.suffix = s.back();
    s.remove_suffix(1);
  }
  auto dot = s.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == s.size()) return std::nullopt;
  auto digits = [](std::string_view d, int& out) {  // any length, as Python's int(); huge saturates
    if (d.empty()) return false;
    long long v = 0;
    for (char c : d) {
      if (c < '0' || c > '9') return false;
      v = std::min(v * 10 + (c - '0'), 1'000'000'000LL);
    }
    out = static_cast<int>(v);
    return true;
  };
  if (!digits(s.substr(0, dot), e.major) || !digits(s.substr(dot + 1), e.minor)) return std::nullopt;
  return e;
}

// A name another process is making right now: a khub temp name (`<name>.<pid>.<8 hex>.tmp`, made
// by older khub versions inside the snapshot) or a download in progress.
bool in_flight_name(const std::string& rel) {
  const std::string name = fs::path(rel).filename().string();
  return temp_name_pid(name) != 0 || name.ends_with(".incomplete");
}

// Untouched for a minute: no writer's temp name lives that long (they are renamed at once). The pid
// alone is not enough: a cache shared between containers sees pids of other namespaces.
bool stale(const fs::path& p) {
  struct stat st {};
  if (::lstat(p.c_str(), &st) != 0) return false;
  return ::time(nullptr) - st.st_mtime > 60;
}

bool process_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// compute_digest + compare_digests, tolerant of other processes writing the same cached snapshot:
// a walk that met a name vanishing under it (Io), or whose only violations are unknown files with
// in-flight temp names, is tried again after a pause (up to about a second). In a cache, a temp
// name whose process is gone (a writer killed mid-way) is removed: it is a leftover, not content.
Expected<std::vector<protocol::DigestViolation>> digest_violations(const fs::path& dir, const protocol::Digest& expected,
                                                                   HashReuse reuse, bool in_cache) {
  auto pause = std::chrono::milliseconds(10);
  for (int attempt = 0;; ++attempt) {
    const bool last = attempt >= 6;
    auto actual = protocol::compute_digest(dir, expected.algorithm, reuse);
    if (!actual) {
      if (last || actual.error().code != ErrorCode::Io) return std::move(actual).error();
    } else {
      auto violations = protocol::compare_digests(expected, *actual);
      bool transient = !violations.empty();
      for (const auto& v : violations)
        if (v.kind != protocol::DigestViolationKind::UnknownFile || !in_flight_name(v.path)) transient = false;
      if (!transient || last) return violations;
      if (in_cache)
        for (const auto& v : violations) {
          const long pid = temp_name_pid(fs::path(v.path).filename().string());
          std::error_code ec;
          if (pid != 0 && !process_alive(pid) && stale(dir / v.path)) fs::remove(dir / v.path, ec);
        }
    }
    std::this_thread::sleep_for(pause);
    pause *= 2;
  }
}

}  // namespace

bool cuda_archs_admit(const std::vector<std::string>& archs, variants::Version cap) {
  if (archs.empty()) return true;
  bool any_parsed = false;
  for (const auto& a : archs) {
    auto e = parse_arch(a);
    if (!e) continue;
    any_parsed = true;
    bool ok = false;
    if (e->suffix == 'a') ok = cap.major == e->major && cap.minor == e->minor;
    else if (e->suffix == 'f') ok = cap.major == e->major && cap.minor >= e->minor;
    else if (e->ptx) ok = cap >= variants::Version{e->major, e->minor};
    else ok = cap.major == e->major && cap.minor >= e->minor;
    if (ok) return true;
  }
  return !any_parsed;
}

namespace detail {

bool delete_cached_file(const fs::path& file) {
  std::error_code ec;
  if (fs::is_symlink(file, ec)) {
    const fs::path blob = fs::weakly_canonical(file.parent_path() / fs::read_symlink(file, ec), ec);
    fs::path repo;
    for (fs::path p = file.parent_path(); p.has_relative_path(); p = p.parent_path()) {
      if (p.filename() == "snapshots") {
        repo = p.parent_path();
        break;
      }
    }
    std::error_code ec_blobs;
    const fs::path blobs = repo.empty() ? fs::path() : fs::weakly_canonical(repo / "blobs", ec_blobs);
    if (!ec && !ec_blobs && !blobs.empty() && blob.parent_path() == blobs && fs::is_regular_file(blob, ec))
      fs::remove(blob, ec);
  }
  ec.clear();
  return fs::remove(file, ec) && !ec;
}


Expected<std::string> choose_variant(const std::vector<std::string>& names, const variants::HostInfo& host,
                                     const std::string& where, variants::Resolution& resolution,
                                     variants::NativeRuntime runtime) {
  resolution = variants::resolve_variants(names, host);
  // The canonical name, as kernels loads `variant.variant_str`: a folder spelt `cu0130` is the
  // variant cu130 and is looked up as build/…-cu130-…/ (so both clients fetch the same files).
  if (const auto* d = variants::first_loadable(resolution, runtime)) return d->variant.name();
  Error e(ErrorCode::NoVariant, "Cannot find a build variant for this system in " + where,
          "build the kernel for this host's torch, C++ ABI and CUDA version");
  // Python-only (noarch) builds: the Python client loads them, khub cannot. Say so, by name.
  std::string noarch, fitting;
  bool arch_fits = false, arch_exists = false;
  for (const auto& d : resolution.decisions) {
    const bool python_only = !d.variant.is_arch();
    if (python_only) noarch += (noarch.empty() ? "" : ", ") + d.name;
    if (python_only && d.accepted) fitting += (fitting.empty() ? "" : ", ") + d.name;
    arch_exists = arch_exists || !python_only;
    arch_fits = arch_fits || (!python_only && d.accepted);
  }
  if (!noarch.empty() && (!arch_exists || (!fitting.empty() && !arch_fits))) {
    e.message = !arch_exists ? "only Python-only builds exist in " + where + ": " + noarch
                             : "only Python-only builds fit this system in " + where + ": " + fitting;
    e.hint = "noarch builds hold Python/Triton code that only the Python `kernels` package loads; to load it from "
             "C++ ask the publisher for a torch, stable-ABI or tvm-ffi build";
  }
  // khub::ffi loads tvm-ffi builds only, khub::kernel every other native kind: say which API fits.
  bool ffi_exists = false, ffi_fits = false, torch_fits = false;
  for (const auto& d : resolution.decisions) {
    if (!d.variant.is_arch()) continue;
    const bool ffi = d.variant.arch->framework.kind == variants::FrameworkKind::TvmFfi;
    ffi_exists = ffi_exists || ffi;
    ffi_fits = ffi_fits || (ffi && d.accepted);
    torch_fits = torch_fits || (!ffi && d.accepted);
  }
  if (runtime == variants::NativeRuntime::TvmFfi && !ffi_exists && e.message.rfind("only Python-only", 0) != 0)
    e.hint = "this kernel has no tvm-ffi build, the only kind khub::ffi loads: load its torch or stable-ABI build "
             "with khub::get_kernel (LibTorch), or ask the publisher for a tvm-ffi build";
  else if (runtime == variants::NativeRuntime::TvmFfi && ffi_exists && !ffi_fits)
    e.hint = host.tvm_ffi ? "no tvm-ffi build fits this host's tvm-ffi " + host.tvm_ffi->str() + ", CPU, OS and CUDA version"
                          : "no tvm-ffi runtime (libtvm_ffi.so) is loaded in this process";
  else if (runtime == variants::NativeRuntime::Torch && ffi_fits && !torch_fits)
    e.hint = "only tvm-ffi builds fit this host: load them with khub::ffi::get_kernel (the torch-free API)";
  e.note("host: " + variants::host_to_json(host, -1));  // -1: one line
  std::string trace = resolution.trace();
  std::size_t start = 0;
  while (start < trace.size()) {
    auto nl = trace.find('\n', start);
    e.note(trace.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (names.empty()) e.note("no variant directories under build/");
  return e;
}

Status check_device_arch(const FetchedKernel& kernel, const variants::HostInfo& host) {
  const auto& backend = kernel.metadata.backend;
  if (!backend.archs || backend.archs->empty()) return {};
  std::string list;
  for (const auto& a : *backend.archs) list += (list.empty() ? "" : ", ") + a;
  std::string reason;
  if (backend.type == protocol::BackendType::Cuda && host.cuda_capability &&
      !cuda_archs_admit(*backend.archs, *host.cuda_capability)) {
    reason = "CUDA capability " + host.cuda_capability->str() + " of the current device is not supported";
  } else if (backend.type == protocol::BackendType::Rocm && host.rocm_arch &&
             std::find(backend.archs->begin(), backend.archs->end(), *host.rocm_arch) == backend.archs->end()) {
    reason = "ROCm arch " + *host.rocm_arch + " of the current device is not supported";  // exact names, as kernels
  }
  if (reason.empty()) return {};
  return Error(ErrorCode::Unsupported,
               "Kernel '" + kernel.metadata.name + "' variant '" + kernel.variant +
                   "' does not support the current device: " + reason + " by the architectures of the build: " + list +
                   ". The declared architectures can be incomplete (e.g. when a kernel has a Triton fallback), "
                   "pass `check_arch=False` to skip this check. Warning: the kernel may fail or crash the process "
                   "at run time when it does not support the device.",
               "use a build made for this GPU, or set check_arch = false");
}

namespace {

// A trusted_root.json named by the caller, parsed once per process while the file is unchanged
// (get_kernel runs the policy on every call, warm ones included).
Expected<signing::SigstoreTrustRoot> trusted_root_file(const fs::path& path) {
  struct Entry {
    fs::file_time_type mtime;
    std::uintmax_t size = 0;
    signing::SigstoreTrustRoot root;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  std::error_code ec;
  const auto mtime = fs::last_write_time(path, ec);
  const auto size = ec ? 0 : fs::file_size(path, ec);
  std::lock_guard lock(mutex);
  if (!ec) {
    auto it = cache.find(path.string());
    if (it != cache.end() && it->second.mtime == mtime && it->second.size == size) return it->second.root;
  }
  KHUB_TRY(auto root, signing::SigstoreTrustRoot::load(path));
  if (!ec) cache.insert_or_assign(path.string(), Entry{mtime, size, root});
  return root;
}

}  // namespace

Status apply_signature_policy(FetchedKernel& kernel, const KernelRequest& request) {
  const signing::SignaturePolicy policy = request.options.signature_policy;
  if (policy == signing::SignaturePolicy::Ignore) return {};
  signing::SignatureTrust trust;
  trust.public_keys_pem = request.options.trusted_keys;
  trust.identities = request.options.trusted_identities;
  std::optional<signing::SigstoreTrustRoot> root;
  if (!request.options.sigstore_trusted_root.empty()) {
    KHUB_TRY(root, trusted_root_file(request.options.sigstore_trusted_root));
    trust.sigstore_root = &*root;
  }
  auto check = signing::verify_variant_signature(kernel.variant_dir, trust);
  const bool ok = check.outcome == signing::SignatureOutcome::Success;
  kernel.signature = ok ? SignatureStatus::Verified : SignatureStatus::Failed;
  if (ok) return {};
  std::string what = "build/" + kernel.variant + "/metadata.json.sigstore: " +
                     std::string(signing::to_string(check.outcome)) + (check.detail.empty() ? "" : ": " + check.detail);
  if (policy == signing::SignaturePolicy::Warn) {
    kernel.warnings.push_back(what);
    return {};
  }
  return Error(ErrorCode::Signature, what,
               "trust the publisher's public key (trusted_keys) or CI workflow (trusted_identities), or lower the policy");
}

}  // namespace detail

Status verify_variant(FetchedKernel& kernel, const CacheLayout* cache, HashReuse reuse_hashes) {
  const fs::path& dir = kernel.variant_dir;
  std::error_code ec;
  kernel.signature = fs::exists(dir / "metadata.json.sigstore", ec) ? SignatureStatus::PresentNotVerified
                                                                    : SignatureStatus::Absent;
  const std::string prefix = "build/" + kernel.variant + "/";
  if (kernel.metadata.digest) {
    const auto& expected = *kernel.metadata.digest;
    std::vector<protocol::DigestViolation> violations;
    KHUB_TRY(violations, digest_violations(dir, expected, reuse_hashes, cache != nullptr));
    if (!violations.empty()) {
      std::string first;
      int removed = 0;
      for (const auto& v : violations) {
        if (v.kind == protocol::DigestViolationKind::HashMismatch) {
          if (first.empty()) first = v.path;
          if (cache && detail::delete_cached_file(dir / v.path)) ++removed;
        }
      }
      if (first.empty()) first = violations.front().path;
      // Say what was done: a file is said removed only when this process removed one.
      std::string hint;
      if (!cache) hint = "rebuild the kernel or restore the file";
      else if (removed > 0) hint = "the bad file was removed from the cache; fetch the kernel again";
      else if (temp_name_pid(fs::path(first).filename().string()) != 0)
        hint = "a temporary file of another khub process (pid " +
               std::to_string(temp_name_pid(fs::path(first).filename().string())) +
               ") is in the variant folder; when no download runs, remove it and try again";
      else hint = "the cached variant does not hold exactly the files metadata.json lists; remove the snapshot "
                  "folder and fetch the kernel again";
      Error e(ErrorCode::Integrity,
              prefix + first + ": does not match the digest in metadata.json" +
                  (violations.size() > 1 ? " (" + std::to_string(violations.size()) + " violations)" : ""),
              hint);
      e.note("kernel does not match the expected digest:");
      for (const auto& v : violations) e.note(v.describe());
      return e;
    }
    kernel.verified = true;
    return {};
  }
  kernel.warnings.push_back("metadata.json of " + kernel.variant +
                            " has no digest; checked every cached file against its etag instead");
  if (!cache) return {};  // a local build without a digest cannot be checked
  int copies = 0;  // files of a copy-mode cache (HF_HUB_DISABLE_SYMLINKS): no etag to check them by
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code entry_ec;  // the walk's own error stays in ec
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (in_flight_name(rel)) continue;  // another process's pointer in the making (older khub versions)
    if (!it->is_symlink(entry_ec)) {
      copies += it->is_regular_file(entry_ec) ? 1 : 0;
      continue;
    }
    fs::path target = fs::read_symlink(it->path(), entry_ec);
    if (entry_ec)
      return Error(ErrorCode::Io, "cannot read " + it->path().string() + ": " + entry_ec.message());
    std::string etag = target.filename().string();
    if (!is_commit_hash(etag))
      return Error(ErrorCode::Integrity, prefix + rel + ": its blob '" + etag + "' is not named by a sha1 or sha256",
                   "the cache was not written by a Hub client; fetch the kernel again into a clean cache");
    Expected<std::string> got = Error(ErrorCode::Io, "");
    if (etag.size() == 64) {
      auto raw = hash_file(it->path(), HashAlgorithm::Sha256, reuse_hashes);
      got = raw ? Expected<std::string>(to_hex(*raw)) : Expected<std::string>(raw.error());
    } else {
      got = git_blob_sha1_file(it->path());
    }
    if (!got) return got.error();
    if (*got != etag) {
      const bool removed = detail::delete_cached_file(it->path());
      return Error(ErrorCode::Integrity, prefix + rel + ": cached content does not match its etag",
                   removed ? "the bad file was removed from the cache; fetch the kernel again"
                           : "remove the snapshot folder and fetch the kernel again")
          .note("expected " + etag + ", got " + *got);
    }
  }
  // A walk cut short checked only part of the folder: that is no verification.
  if (ec) return Error(ErrorCode::Io, "cannot read " + dir.string() + ": " + ec.message());
  if (copies > 0) {  // checked when downloaded, but not again now: say so instead of claiming it
    kernel.warnings.push_back(std::to_string(copies) + " file(s) of " + kernel.variant +
                              " are copies without an etag (copy-mode cache) and were not checked again");
    return {};
  }
  kernel.verified = true;
  return {};
}

}  // namespace khub::hub
