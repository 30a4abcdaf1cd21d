#include "khub/publish/bundle.h"

#include <archive.h>
#include <archive_entry.h>

#include "build_fixture.h"
#include "khub/publish/hash_build.h"

namespace khub::publish {
namespace {

namespace fs = std::filesystem;
using khub::testing::slurp;

struct RawEntry {
  std::string name;
  unsigned type = AE_IFREG;
  std::string data;
  std::string link;  // symlink target or hard link source
  bool hardlink = false;
};

// Writes a tar.zst with exactly these entries, as a hostile producer could.
void write_raw(const fs::path& out, const std::vector<RawEntry>& entries) {
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_add_filter_zstd(a);
  ASSERT_EQ(archive_write_open_filename(a, out.c_str()), ARCHIVE_OK);
  for (const auto& e : entries) {
    struct archive_entry* en = archive_entry_new();
    archive_entry_set_pathname(en, e.name.c_str());
    archive_entry_set_filetype(en, e.type);
    archive_entry_set_perm(en, 0644);
    if (e.hardlink) {
      archive_entry_set_hardlink(en, e.link.c_str());
    } else if (e.type == AE_IFLNK) {
      archive_entry_set_symlink(en, e.link.c_str());
    }
    archive_entry_set_size(en, e.type == AE_IFREG && !e.hardlink ? static_cast<la_int64_t>(e.data.size()) : 0);
    archive_write_header(a, en);
    if (e.type == AE_IFREG && !e.hardlink) archive_write_data(a, e.data.data(), e.data.size());
    archive_entry_free(en);
  }
  archive_write_close(a);
  archive_write_free(a);
}

using Bundle = khub::testing::BuildFixture;

TEST_F(Bundle, PackRoundTripsAndIsDeterministic) {
  add_variant("torch-cuda");
  add_variant("torch212-cxx11-cu130-x86_64-linux");
  write("torch-cuda/__pycache__/x.pyc", "junk");
  write("CARD.md", "# card\n");
  fs::create_directories(kernel() / "benchmarks");
  std::ofstream(kernel() / "benchmarks" / "benchmark_relu.py") << "pass\n";
  auto tree = discover_build(kernel());
  ASSERT_TRUE(tree);
  ASSERT_TRUE(write_digests(*tree));
  auto packed = pack_build(*tree, root_ / "a.tar.zst");
  ASSERT_TRUE(packed) << packed.error().message;
  EXPECT_EQ(packed->files, 6u);  // 2 × (__init__.py, metadata.json) + CARD.md + benchmark
  ASSERT_TRUE(pack_build(*tree, root_ / "b.tar.zst"));
  EXPECT_EQ(slurp(root_ / "a.tar.zst"), slurp(root_ / "b.tar.zst"));

  auto merged = unpack_bundles({root_ / "a.tar.zst"}, root_ / "out");
  ASSERT_TRUE(merged) << merged.error().message;
  EXPECT_EQ(merged->variants.size(), 2u);
  EXPECT_EQ(merged->kernel_dir, fs::canonical(root_ / "out"));
  EXPECT_EQ(slurp(root_ / "out" / "build" / "torch-cuda" / "metadata.json"),
            slurp(build() / "torch-cuda" / "metadata.json"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "build" / "CARD.md"));
  EXPECT_TRUE(fs::exists(root_ / "out" / "benchmarks" / "benchmark_relu.py"));
  EXPECT_FALSE(fs::exists(root_ / "out" / "build" / "torch-cuda" / "__pycache__"));
  // The same variant twice is refused.
  auto twice = unpack_bundles({root_ / "a.tar.zst", root_ / "b.tar.zst"}, root_ / "out2");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("already present (the same variant in two bundles)"), std::string::npos);
}

TEST_F(Bundle, SharedFilesMayRepeatWithEqualBytes) {
  write_raw(root_ / "a.tar.zst", {{"build/a/metadata.json", AE_IFREG, "{}", "", false},
                                  {"build/CARD.md", AE_IFREG, "# card\n", "", false}});
  write_raw(root_ / "b.tar.zst", {{"build/b/metadata.json", AE_IFREG, "{}", "", false},
                                  {"build/CARD.md", AE_IFREG, "# card\n", "", false}});
  write_raw(root_ / "c.tar.zst", {{"build/c/metadata.json", AE_IFREG, "{}", "", false},
                                  {"build/CARD.md", AE_IFREG, "# another card\n", "", false}});
  ASSERT_TRUE(extract_bundle(root_ / "a.tar.zst", root_ / "m"));
  ASSERT_TRUE(extract_bundle(root_ / "b.tar.zst", root_ / "m"));
  EXPECT_EQ(slurp(root_ / "m" / "build" / "CARD.md"), "# card\n");
  EXPECT_FALSE(fs::exists(root_ / "m" / "build" / "CARD.md.incoming"));
  auto differs = extract_bundle(root_ / "c.tar.zst", root_ / "m");
  ASSERT_FALSE(differs);
  EXPECT_NE(differs.error().message.find("differs from the same file in another bundle"), std::string::npos);
}

TEST_F(Bundle, HostileEntriesRefused) {
  struct Case {
    std::vector<RawEntry> entries;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{{"/etc/passwd", AE_IFREG, "x", "", false}}, "absolute path"},
      {{{"build/../../escape.txt", AE_IFREG, "x", "", false}}, "`..`"},
      {{{"build/v/link", AE_IFLNK, "", "../../../etc/passwd", false}}, "symbolic link"},
      {{{"build/v/abs", AE_IFLNK, "", "/etc/passwd", false}}, "symbolic link"},
      {{{"build/v/b.py", AE_IFLNK, "", "a.py", false}}, "symbolic link"},  // even inside
      // Each link looks inside on its own; together they climb out (found by a security review).
      {{{"l1", AE_IFLNK, "", ".", false}, {"l1/l2", AE_IFLNK, "", "..", false}, {"l2/l3", AE_IFLNK, "", "..", false},
        {"l2/l3/escape.txt", AE_IFREG, "x", "", false}},
       "symbolic link"},
      {{{"build/v/hard", AE_IFREG, "", "../outside", true}}, "hard link"},
      {{{"build/v/a.py", AE_IFREG, "x", "", false}, {"build/v/h.py", AE_IFREG, "", "build/v/a.py", true}}, "hard link"},
      {{{"build/v/dev", AE_IFCHR, "", "", false}}, "not a regular file"},
      {{{"build/v/fifo", AE_IFIFO, "", "", false}}, "not a regular file"},
      {{{"build/v/big", AE_IFREG, std::string(2048, 'x'), "", false}}, "larger than 1024 bytes"},
  };
  ExtractLimits limits;
  limits.max_entry_bytes = 1024;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    auto archive = root_ / ("bad" + std::to_string(i) + ".tar.zst");
    write_raw(archive, cases[i].entries);
    auto dest = root_ / ("x" + std::to_string(i)) / "dest";
    auto st = extract_bundle(archive, dest, limits);
    ASSERT_FALSE(st) << i;
    EXPECT_EQ(st.error().code, ErrorCode::InvalidArgument) << st.error().message;
    EXPECT_NE(st.error().message.find(cases[i].expect), std::string::npos) << st.error().message;
  }
  EXPECT_FALSE(fs::exists(root_ / "escape.txt"));  // where the `..` entry and the link chain would land
  // Regular files, and the total limit.
  write_raw(root_ / "ok.tar.zst", {{"build/v/a.py", AE_IFREG, "print(1)\n", "", false},
                                   {"build/v/b.py", AE_IFREG, "print(2)\n", "", false}});
  ASSERT_TRUE(extract_bundle(root_ / "ok.tar.zst", root_ / "ok"));
  EXPECT_EQ(slurp(root_ / "ok" / "build" / "v" / "b.py"), "print(2)\n");
  ExtractLimits tiny;
  tiny.max_total_bytes = 4;
  EXPECT_FALSE(extract_bundle(root_ / "ok.tar.zst", root_ / "ok2", tiny));
  std::ofstream(root_ / "not-an-archive.tar.zst") << "plain text";
  auto junk = extract_bundle(root_ / "not-an-archive.tar.zst", root_ / "junk");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().code, ErrorCode::Io);
}

}  // namespace
}  // namespace khub::publish
