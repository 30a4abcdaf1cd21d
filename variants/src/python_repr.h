#pragma once
// Python's repr() of a str, so that parse errors quote names exactly as upstream's `{s!r}` does.
#include <string>
#include <string_view>

namespace khub::variants {

/// Quotes with '…' (or "…" when the text holds ' and no "), escapes \\, the quote, \t \n \r and other
/// control characters like Python. Valid UTF-8 passes through except code points Python deems
/// unprintable among the common ones (C1 controls, no-break space, soft hyphen, BOM, line/paragraph
/// separators); bytes that are not UTF-8 appear as \udcXX, as Python's surrogateescape shows them.
[[nodiscard]] std::string python_repr(std::string_view text);

}  // namespace khub::variants
