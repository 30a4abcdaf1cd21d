// The README metadata check of POST /api/validate-yaml (localhub/src/card_metadata.cpp).
#include "card_metadata.h"

#include <gtest/gtest.h>

namespace khub::localhub {
namespace {

TEST(CardMetadata, ValidBlocksPass) {
  for (const char* card : {"---\nlicense: mit\ntags:\n- a\n- b\n---\n# Title\n",
                           "---\r\nlicense: mit\r\n---\r\n",
                           "---\nmodel-index:\n- name: x\n  results: []\n---\n",
                           "---\nmodel-index: [{name: x}]\n# a comment\n\nlanguage: en\n---\ntext"}) {
    auto c = check_card_metadata(card);
    EXPECT_TRUE(c.errors.empty()) << card << c.errors.front();
    EXPECT_TRUE(c.warnings.empty()) << card;
  }
}

TEST(CardMetadata, MissingOrEmptyBlocksWarn) {
  for (const char* card : {"This is a modelcard without metadata", "", "---\n---\nbody", "---\n# only a comment\n---\n"}) {
    auto c = check_card_metadata(card);
    EXPECT_TRUE(c.errors.empty()) << card;
    ASSERT_EQ(c.warnings.size(), 1u) << card;
    EXPECT_NE(c.warnings[0].find("Empty or missing yaml metadata"), std::string::npos);
  }
}

TEST(CardMetadata, InvalidBlocksFailWithTheReason) {
  struct Case { const char* card; const char* reason; };
  for (auto [card, reason] : {Case{"\n---\nmodel-index: foo\n---\n", "\"model-index\" must be an array"},  // blank lines first
                              Case{"---\nmodel-index: foo\n---\n", "\"model-index\" must be an array"},
                              Case{"text\n---\nmodel-index: foo\n---\n", "Empty or missing"},  // not at the top: no block
                              Case{"---\nmodel-index:\n  name: x\n---\n", "\"model-index\" must be an array"},
                              Case{"---\nlicense: mit\n", "never closed"},
                              Case{"---\nlicense: mit\nlicense: apache-2.0\n---\n", "duplicate key \"license\""},
                              Case{"---\njust text\n---\n", "line 2 of the metadata: expected `key: value`"},
                              Case{"\n\n---\njust text\n---\n", "line 4 of the metadata"},
                              Case{"---\n  indented: first\n---\n", "indented text before any key"},
                              Case{"---\ntags:\n\t- a\n---\n", "a tab in the indentation"}}) {
    auto c = check_card_metadata(card);
    auto all = c.errors;
    all.insert(all.end(), c.warnings.begin(), c.warnings.end());
    ASSERT_FALSE(all.empty()) << card;
    EXPECT_NE(all[0].find(reason), std::string::npos) << card << " -> " << all[0];
  }
}

}  // namespace
}  // namespace khub::localhub
