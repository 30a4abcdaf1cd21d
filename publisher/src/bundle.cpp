#include "khub/publish/bundle.h"

#include <archive.h>
#include <archive_entry.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>

#include "khub/base/temp_files.h"
#include "khub/publish/upload_plan.h"

namespace khub::publish {
namespace {

namespace fs = std::filesystem;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;
using EntryPtr = std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)>;

Error archive_error(struct archive* a, const std::string& what) {
  const char* msg = archive_error_string(a);
  return Error(ErrorCode::Io, what + ": " + (msg ? msg : "libarchive error"));
}

Status add_file(struct archive* a, const fs::path& source, const std::string& name, std::uint64_t size) {
  EntryPtr entry(archive_entry_new(), archive_entry_free);
  archive_entry_set_pathname(entry.get(), name.c_str());
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  std::error_code ec;
  auto perms = fs::status(source, ec).permissions();
  bool exec = (perms & fs::perms::owner_exec) != fs::perms::none;
  archive_entry_set_perm(entry.get(), exec ? 0755 : 0644);
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(size));
  archive_entry_set_mtime(entry.get(), 0, 0);
  archive_entry_set_uid(entry.get(), 0);
  archive_entry_set_gid(entry.get(), 0);
  if (archive_write_header(a, entry.get()) != ARCHIVE_OK) return archive_error(a, "cannot add " + name);
  std::ifstream in(source, std::ios::binary);
  if (!in) return Error(ErrorCode::Io, "cannot read " + source.string());
  std::vector<char> buf(1 << 16);
  std::uint64_t written = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    auto n = in.gcount();
    if (n <= 0) break;
    if (archive_write_data(a, buf.data(), static_cast<size_t>(n)) < 0) return archive_error(a, "cannot write " + name);
    written += static_cast<std::uint64_t>(n);
  }
  if (written != size) return Error(ErrorCode::Io, source.string() + " changed while packing");
  return {};
}

// `..`, absolute, empty components: not a safe relative path.
bool is_safe_relative(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  fs::path p(name);
  for (const auto& part : p) {
    if (part == ".." || part.string().find('\\') != std::string::npos) return false;
  }
  return true;
}

// build/<variant>/<file>: belongs to one variant.
bool is_variant_file(const std::string& name) {
  if (!name.starts_with("build/")) return false;
  return name.find('/', 6) != std::string::npos;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

Expected<PackResult> pack_build(const BuildTree& tree, const fs::path& out) {
  KHUB_TRY(auto files, collect_local_files(tree));
  std::vector<LocalFile> all = std::move(files.build);
  if (files.readme) {
    files.readme->repo_path = "build/CARD.md";
    all.push_back(*files.readme);
  }
  for (auto& b : files.benchmarks) all.push_back(std::move(b));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.repo_path < b.repo_path; });

  fs::path tmp = out;
  tmp += ".tmp" + std::to_string(::getpid());
  const TempFileGuard removed_on_ctrl_c(tmp);
  ArchivePtr a(archive_write_new(), archive_write_free);
  archive_write_set_format_pax_restricted(a.get());
  if (archive_write_add_filter_zstd(a.get()) != ARCHIVE_OK) return archive_error(a.get(), "zstd");
  if (archive_write_open_filename(a.get(), tmp.c_str()) != ARCHIVE_OK) {
    return archive_error(a.get(), "cannot create " + tmp.string());
  }
  PackResult result;
  auto fail = [&](Error e) {
    a.reset();
    std::error_code ignored;
    fs::remove(tmp, ignored);
    return e;
  };
  for (const auto& f : all) {
    if (auto st = add_file(a.get(), f.source, f.repo_path, f.size); !st) return fail(std::move(st).error());
    ++result.files;
    result.bytes += f.size;
  }
  if (archive_write_close(a.get()) != ARCHIVE_OK) return fail(archive_error(a.get(), "cannot finish " + out.string()));
  a.reset();
  std::error_code ec;
  fs::rename(tmp, out, ec);
  if (ec) return fail(Error(ErrorCode::Io, "cannot write " + out.string() + ": " + ec.message()));
  return result;
}

Status extract_bundle(const fs::path& archive_path, const fs::path& dest, const ExtractLimits& limits) {
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK) {
    return archive_error(a.get(), "cannot open bundle " + archive_path.string());
  }
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) return Error(ErrorCode::Io, "cannot create " + dest.string() + ": " + ec.message());
  const std::string where = archive_path.filename().string();
  std::uint64_t total = 0;
  std::size_t count = 0;
  struct archive_entry* entry = nullptr;
  std::vector<char> buf(1 << 16);
  while (true) {
    int rc = archive_read_next_header(a.get(), &entry);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK) return archive_error(a.get(), "cannot read bundle " + where);
    std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    while (name.starts_with("./")) name.erase(0, 2);
    auto refuse = [&](const std::string& why) {
      return Error(ErrorCode::InvalidArgument, where + ": entry `" + name + "` refused: " + why);
    };
    if (++count > limits.max_entries) return refuse("too many entries");
    if (!is_safe_relative(name)) return refuse("absolute path or `..` component");
    const fs::path target = dest / name;
    const auto type = archive_entry_filetype(entry);
    // No links at all: `khub pack` writes none, and a chain of links that each look inside the bundle
    // (l1 -> ., l1/l2 -> .., l2/l3 -> ..) can still lead a later entry out of it.
    if (archive_entry_hardlink(entry)) return refuse("hard link (a bundle holds regular files and folders only)");
    if (type == AE_IFDIR) {
      fs::create_directories(target, ec);
      if (ec) return Error(ErrorCode::Io, "cannot create " + target.string() + ": " + ec.message());
      continue;
    }
    if (type == AE_IFLNK) return refuse("symbolic link (a bundle holds regular files and folders only)");
    if (type != AE_IFREG) return refuse("not a regular file or directory");
    const auto size = static_cast<std::uint64_t>(archive_entry_size(entry));
    if (size > limits.max_entry_bytes) return refuse("larger than " + std::to_string(limits.max_entry_bytes) + " bytes");
    total += size;
    if (total > limits.max_total_bytes) return refuse("bundle larger than " + std::to_string(limits.max_total_bytes) + " bytes");
    // Files shared by every job's bundle (build/CARD.md, benchmarks/) may repeat with equal bytes;
    // a variant's files may not (the same variant in two bundles).
    const bool exists = fs::exists(fs::symlink_status(target, ec));
    const bool shared = !is_variant_file(name);
    if (exists && !shared) return refuse("already present (the same variant in two bundles)");
    const fs::path write_to = exists ? fs::path(target.string() + ".incoming") : target;
    fs::create_directories(write_to.parent_path(), ec);
    if (ec) return Error(ErrorCode::Io, "cannot create " + write_to.parent_path().string() + ": " + ec.message());
    std::ofstream out(write_to, std::ios::binary | std::ios::trunc);
    if (!out) return Error(ErrorCode::Io, "cannot write " + write_to.string());
    std::uint64_t got = 0;
    while (true) {
      la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n < 0) return archive_error(a.get(), where + ": cannot read " + name);
      if (n == 0) break;
      got += static_cast<std::uint64_t>(n);
      if (got > size) return refuse("more data than its header declares");
      out.write(buf.data(), n);
    }
    out.close();
    if (!out || got != size) return Error(ErrorCode::Io, where + ": short entry " + name);
    if (exists) {
      const bool same = read_file(write_to) == read_file(target);
      fs::remove(write_to, ec);
      if (!same) return refuse("differs from the same file in another bundle");
      continue;
    }
    fs::permissions(target, (archive_entry_perm(entry) & 0111) ? fs::perms(0755) : fs::perms(0644), ec);
  }
  return {};
}

Expected<BuildTree> unpack_bundles(const std::vector<fs::path>& archives, const fs::path& dest,
                                   const ExtractLimits& limits) {
  for (const auto& a : archives) KHUB_CHECK(extract_bundle(a, dest, limits));
  return discover_build(dest);
}

}  // namespace khub::publish
