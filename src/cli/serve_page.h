// The inspector's page (src/cli/serve/web/index.html), embedded at build time by
// cmake/EmbedText.cmake: one HTML file with its styles and script inline.
#pragma once

#include <string_view>

namespace loom::cli {

extern const std::string_view kInspectorPage;

}  // namespace loom::cli
