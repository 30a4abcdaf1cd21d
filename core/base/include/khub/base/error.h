#pragma once
// One error type for every khub library: a code a caller can act on, a one-line message that
// names the object (expected vs found), an optional hint with the next step, and notes.
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace khub {

enum class ErrorCode {
  InvalidArgument,   // bad input from the caller (flag, name, JSON shape)
  InvalidVariant,    // a variant name that does not parse
  InvalidMetadata,   // metadata.json / build.toml missing keys or malformed
  RepoNotFound,
  RevisionNotFound,
  EntryNotFound,
  GatedRepo,
  Unauthorized,      // 401: no or bad token
  Forbidden,         // 403: token lacks rights
  RateLimited,       // 429 after retries
  Network,           // connect / timeout / dropped connection / 5xx after retries
  Protocol,          // the server answered something khub cannot read
  Conflict,          // 409 / 412
  Integrity,         // hash, size or digest mismatch
  NoVariant,         // no build variant fits this host
  Untrusted,         // publisher not trusted and trust_remote_code not set
  OfflineMiss,       // offline and not in the cache
  Io,                // local filesystem failure
  LoadFailed,        // dlopen / op lookup failure
  AbiViolation,      // khub check found a policy violation
  Signature,         // signature bundle missing, broken or not trusted
  Cancelled,
  Unsupported,
};

[[nodiscard]] std::string_view to_string(ErrorCode code) noexcept;

struct Error {
  ErrorCode code = ErrorCode::InvalidArgument;
  std::string message;             // lower-case one line: what was wrong
  std::string hint;                // what to do next, may be empty
  std::vector<std::string> notes;  // extra lines (expected/got, trace)
  int http_status = 0;             // HTTP status when the error came from a server

  Error() = default;
  Error(ErrorCode c, std::string msg, std::string h = {})
      : code(c), message(std::move(msg)), hint(std::move(h)) {}

  Error& note(std::string line) & { notes.push_back(std::move(line)); return *this; }
  Error&& note(std::string line) && { notes.push_back(std::move(line)); return std::move(*this); }

  /// "message; hint" on one line ("message. Hint" when the message ends in '.'), then one
  /// "\n  note: …" line per note, as the CLI prints it.
  [[nodiscard]] std::string describe() const;
};

/// A value or an Error. Small on purpose: std::expected is C++23 and khub builds as C++20.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  [[nodiscard]] bool has_value() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Expected<void>;

}  // namespace khub

// Propagates the error of an Expected expression, else binds its value: KHUB_TRY(auto x, f());
#define KHUB_CONCAT_INNER(a, b) a##b
#define KHUB_CONCAT(a, b) KHUB_CONCAT_INNER(a, b)
#define KHUB_TRY_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                   \
  if (!tmp) return std::move(tmp).error(); \
  decl = std::move(tmp).value()
#define KHUB_TRY(decl, expr) KHUB_TRY_IMPL(KHUB_CONCAT(khub_try_, __LINE__), decl, expr)
// Propagates the error of a Status expression.
#define KHUB_CHECK(expr)                                              \
  do {                                                                \
    if (auto khub_status_ = (expr); !khub_status_) return std::move(khub_status_).error(); \
  } while (0)
