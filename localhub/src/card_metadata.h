#pragma once
// The check behind POST /api/validate-yaml: the YAML metadata block at the top of a README (repo
// card). Not a YAML parser: it reads the block's top-level `key: value` lines and checks what the
// Hub's validation reports most often (see check_card_metadata).
#include <string>
#include <string_view>
#include <vector>

namespace khub::localhub {

struct CardCheck {
  std::vector<std::string> errors;    // the Hub answers 400 with these
  std::vector<std::string> warnings;  // 200, and huggingface_hub warns with them
};

/// The block starts at the first line that is not blank. Errors: a block opened by `---` and never closed; a top-level line that is not `key: value`;
/// a duplicate key; a tab in the indentation; `model-index` that is not a list. Warning: no block,
/// or an empty one ("Empty or missing yaml metadata in repo card", the Hub's words).
[[nodiscard]] CardCheck check_card_metadata(std::string_view readme);

}  // namespace khub::localhub
