#pragma once
// Content-addressed blob files: blobs/<aa>/<sha256>. A blob appears only after its bytes are on disk
// and hashed (write to tmp/, fsync, rename), so a crash leaves at most a stray temp file.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "khub/base/error.h"
#include "khub/base/hash.h"
#include "khub/base/write_back.h"

namespace khub::localhub {

struct BlobInfo {
  std::string sha256;
  std::uint64_t size = 0;
};

class BlobStore {
 public:
  explicit BlobStore(std::filesystem::path root);

  /// Streams one new blob into a temp file while hashing it.
  class Writer {
   public:
    Writer(Writer&&) noexcept;
    Writer& operator=(Writer&&) noexcept;
    ~Writer();  // removes the temp file unless commit() succeeded
    [[nodiscard]] Status write(std::string_view data);
    [[nodiscard]] std::uint64_t size() const { return size_; }
    /// Syncs and renames into place. Integrity when `expected_sha256`/`expected_size` are given
    /// and differ (the temp file is removed).
    [[nodiscard]] Expected<BlobInfo> commit(std::string_view expected_sha256 = {},
                                            std::optional<std::uint64_t> expected_size = {});

   private:
    friend class BlobStore;
    Writer(BlobStore* store, std::filesystem::path tmp, int fd);
    // Checks, optionally fsyncs and closes the temp file; the blob is not in place yet.
    Expected<BlobInfo> close(std::string_view expected_sha256, std::optional<std::uint64_t> expected_size, bool sync);
    // Renames the closed temp file into place (or drops it when the blob is already stored).
    Status publish(const BlobInfo& info, bool sync_dir);
    // fsyncs the closed temp file.
    Status sync_closed() const;
    BlobStore* store_ = nullptr;
    std::filesystem::path tmp_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
    std::unique_ptr<Hasher> hasher_;
    WriteBack write_back_;  // the sync at commit waits for the last MiBs, not the whole blob
  };

  /// Blobs made durable together: put() writes and hashes a temp file without syncing it; commit()
  /// makes them durable and renames them into place. A few blobs get an fsync each (file and
  /// folder); many get one syncfs before the renames and one after, so a commit of N small files
  /// costs two syncfs calls instead of 2N fsyncs. (syncfs also waits for every other dirty byte of
  /// the file system: a large upload written just before cost a small commit hundreds of ms.)
  /// Blobs of a batch that is not committed are removed with it.
  class Batch {
   public:
    explicit Batch(BlobStore& store) : store_(&store) {}
    [[nodiscard]] Expected<BlobInfo> put(std::string_view data);
    [[nodiscard]] Status commit();

   private:
    BlobStore* store_;
    std::vector<std::pair<Writer, BlobInfo>> pending_;
  };

  [[nodiscard]] Expected<Writer> begin();
  /// Writes a whole in-memory blob.
  [[nodiscard]] Expected<BlobInfo> put(std::string_view data);
  [[nodiscard]] bool contains(std::string_view sha256) const;
  /// Size of a stored blob, nullopt when absent.
  [[nodiscard]] std::optional<std::uint64_t> size_of(std::string_view sha256) const;
  [[nodiscard]] std::filesystem::path path_of(std::string_view sha256) const;
  /// Marks a stored blob as just offered to a client (its mtime), so garbage collection keeps it
  /// through the grace period while the client's commit is on its way.
  void touch(std::string_view sha256) const;
  /// Reads a whole blob (small files only).
  [[nodiscard]] Expected<std::string> read(std::string_view sha256) const;
  /// Folder for in-progress uploads (multipart parts), inside the store.
  [[nodiscard]] std::filesystem::path upload_dir() const { return root_ / "uploads"; }
  [[nodiscard]] std::filesystem::path tmp_dir() const { return root_ / "tmp"; }
  /// Deletes temp files and stale uploads left by a killed process.
  void remove_leftovers();

 private:
  std::filesystem::path root_;
};

}  // namespace khub::localhub
