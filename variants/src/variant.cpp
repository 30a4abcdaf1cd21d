// Variant names: parse and render exactly like the Python `kernels` client.
#include "khub/variants/variant.h"

#include <cassert>
#include <vector>

#include "python_repr.h"

namespace khub::variants {
namespace {

bool is_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Digits of one version component. Python's ints are unbounded; khub caps a component at nine
// significant digits so it fits an int (no real name comes close).
std::optional<int> to_component(std::string_view digits) {
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  if (digits.size() > 9) return std::nullopt;
  int value = 0;
  for (char c : digits) value = value * 10 + (c - '0');
  return value;
}

Error invalid(std::string text) { return Error(ErrorCode::InvalidVariant, std::move(text)); }

Error too_large(std::string_view s) {
  return invalid("Version number too large in variant string: " + python_repr(s));
}

// Full match of `<prefix>(\d)(\d+)` or, with `major_takes_all_but_last`, `<prefix>(\d+)(\d+)` (greedy
// first group). `what` names the kind in upstream's error text, which quotes `shown` (default: s).
Expected<Version> parse_numbered(std::string_view s, std::string_view prefix, bool major_takes_all_but_last,
                                 std::string_view what, std::string_view shown = {}) {
  if (shown.empty()) shown = s;
  std::string_view digits = s.size() >= prefix.size() ? s.substr(prefix.size()) : std::string_view();
  if (s.substr(0, prefix.size()) != prefix || digits.size() < 2 || !is_digits(digits)) {
    return invalid("Invalid " + std::string(what) + " variant string: " + python_repr(shown));
  }
  size_t split = major_takes_all_but_last ? digits.size() - 1 : 1;
  auto major = to_component(digits.substr(0, split));
  auto minor = to_component(digits.substr(split));
  if (!major || !minor) return too_large(shown);
  return Version{*major, *minor};
}

std::vector<std::string_view> split_dash(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dash = s.find('-', start);
    parts.push_back(s.substr(start, dash == std::string_view::npos ? std::string_view::npos : dash - start));
    if (dash == std::string_view::npos) return parts;
    start = dash + 1;
  }
}

std::string join_dash(const std::vector<std::string_view>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end && i < parts.size(); ++i) {
    if (i != begin) out += '-';
    out += parts[i];
  }
  return out;
}

std::string version_digits(const Version& v) { return std::to_string(v.major) + std::to_string(v.minor); }

Expected<ArchVariant> parse_arch(Framework framework, const std::vector<std::string_view>& parts, size_t first) {
  size_t count = parts.size() > first ? parts.size() - first : 0;
  if (count != 3) {
    std::string list = "[";
    for (size_t i = first; i < parts.size(); ++i) {
      if (i != first) list += ", ";
      list += python_repr(parts[i]);
    }
    return invalid("Invalid arch variant parts: " + list + "]");
  }
  KHUB_TRY(Backend backend, parse_backend(parts[first]));
  return ArchVariant{framework, backend, std::string(parts[first + 1]), std::string(parts[first + 2])};
}

Expected<Variant> as_variant(Expected<ArchVariant> parsed) {
  if (!parsed) return std::move(parsed).error();
  Variant v;
  v.arch = std::move(parsed).value();
  return v;
}

}  // namespace

std::string Version::str() const { return std::to_string(major) + "." + std::to_string(minor); }

std::optional<Version> parse_dotted_version(std::string_view text) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view major = text.substr(0, dot);
  std::string_view rest = text.substr(dot + 1);
  std::string_view minor = rest.substr(0, rest.find('.'));
  if (!is_digits(major) || !is_digits(minor)) return std::nullopt;
  // Further components (a patch level) must be numeric too; they are dropped.
  for (std::string_view tail = rest.substr(minor.size()); !tail.empty();) {
    tail.remove_prefix(1);
    std::string_view part = tail.substr(0, tail.find('.'));
    if (!is_digits(part)) return std::nullopt;
    tail.remove_prefix(part.size());
  }
  auto ma = to_component(major);
  auto mi = to_component(minor);
  if (!ma || !mi) return std::nullopt;
  return Version{*ma, *mi};
}

std::string_view Backend::name() const {
  switch (kind) {
    case BackendKind::Cpu: return "cpu";
    case BackendKind::Cuda: return "cuda";
    case BackendKind::Rocm: return "rocm";
    case BackendKind::Xpu: return "xpu";
    case BackendKind::Metal: return "metal";
    case BackendKind::Cann: return "cann";
    case BackendKind::Neuron: return "neuron";
    case BackendKind::Tpu: return "tpu";
  }
  assert(false && "unknown BackendKind");
  return "cpu";
}

bool has_version(BackendKind kind) {
  return kind == BackendKind::Cuda || kind == BackendKind::Rocm || kind == BackendKind::Xpu ||
         kind == BackendKind::Cann;
}

std::string Backend::token() const {
  if (!has_version(kind)) return std::string(name());
  assert(version.has_value() && "versioned backend without a version");
  std::string prefix = kind == BackendKind::Cuda ? "cu" : std::string(name());
  return prefix + (version ? version_digits(*version) : std::string());
}

std::optional<BackendKind> backend_kind_from_name(std::string_view name) {
  static constexpr BackendKind kAll[] = {BackendKind::Cpu,   BackendKind::Cuda, BackendKind::Rocm,
                                         BackendKind::Xpu,   BackendKind::Metal, BackendKind::Cann,
                                         BackendKind::Neuron, BackendKind::Tpu};
  for (BackendKind kind : kAll) {
    if (Backend{kind, {}}.name() == name) return kind;
  }
  return std::nullopt;
}

Expected<Backend> parse_backend(std::string_view s) {
  if (s == "cpu") return Backend{BackendKind::Cpu, {}};
  if (s == "metal") return Backend{BackendKind::Metal, {}};
  if (s == "neuron") return Backend{BackendKind::Neuron, {}};
  if (s == "tpu") return Backend{BackendKind::Tpu, {}};
  struct Prefixed {
    std::string_view prefix;
    BackendKind kind;
    std::string_view what;
  };
  static constexpr Prefixed kPrefixed[] = {{"cu", BackendKind::Cuda, "CUDA"},
                                           {"rocm", BackendKind::Rocm, "ROCm"},
                                           {"xpu", BackendKind::Xpu, "XPU"},
                                           {"cann", BackendKind::Cann, "CANN"}};
  for (const auto& p : kPrefixed) {
    if (s.substr(0, p.prefix.size()) != p.prefix) continue;
    KHUB_TRY(Version version, parse_numbered(s, p.prefix, /*major_takes_all_but_last=*/true, p.what));
    return Backend{p.kind, version};
  }
  return invalid("Unknown backend variant string: " + python_repr(s));
}

Expected<Variant> parse_variant(std::string_view name) {
  const std::vector<std::string_view> parts = split_dash(name);
  const std::string_view head = parts[0];

  if (name.substr(0, 16) == "torch-stable-abi") {
    std::string framework = join_dash(parts, 0, 3);
    KHUB_TRY(Version version, parse_numbered(framework, "torch-stable-abi", false, "Torch stable ABI"));
    return as_variant(parse_arch(Framework{FrameworkKind::TorchStableAbi, version, std::nullopt}, parts, 3));
  }
  if (head == "torch") {
    Variant v;
    v.noarch = NoarchVariant{join_dash(parts, 1, parts.size())};
    return v;
  }
  if (head.substr(0, 5) == "torch") {
    const bool tagged = parts.size() >= 2 && (parts[1] == "cxx11" || parts[1] == "cxx98");
    std::string framework = tagged ? join_dash(parts, 0, 2) : std::string(head);
    KHUB_TRY(Version version, parse_numbered(head, "torch", false, "Torch", framework));
    std::optional<bool> cxx11;
    if (tagged) cxx11 = parts[1] == "cxx11";
    return as_variant(parse_arch(Framework{FrameworkKind::Torch, version, cxx11}, parts, tagged ? 2 : 1));
  }
  if (head == "tvm" && parts.size() >= 2 && parts[1].substr(0, 3) == "ffi") {
    // `tvm-ffi(\d+?)(\d+)`: the lazy first group takes exactly one digit.
    KHUB_TRY(Version version, parse_numbered("tvm-" + std::string(parts[1]), "tvm-ffi", false, "TvmFfi"));
    return as_variant(parse_arch(Framework{FrameworkKind::TvmFfi, version, std::nullopt}, parts, 2));
  }
  return invalid("Unknown framework in variant string: " + python_repr(name));
}

std::string Variant::name() const {
  if (noarch) return "torch-" + noarch->backend_name;
  assert(arch.has_value() && "a Variant holds an arch or a noarch part");
  const Framework& f = arch->framework;
  std::string out;
  switch (f.kind) {
    case FrameworkKind::Torch:
      out = "torch" + version_digits(f.version);
      if (f.cxx11_abi) out += *f.cxx11_abi ? "-cxx11" : "-cxx98";
      break;
    case FrameworkKind::TorchStableAbi: out = "torch-stable-abi" + version_digits(f.version); break;
    case FrameworkKind::TvmFfi: out = "tvm-ffi" + version_digits(f.version); break;
  }
  return out + "-" + arch->backend.token() + "-" + arch->cpu + "-" + arch->os;
}

}  // namespace khub::variants
