// The inspector's page (src/inspect/web/index.html), embedded at build time by
// cmake/EmbedText.cmake: one HTML file with its styles and script inline.
#pragma once

#include <string_view>

namespace loom::inspect {

extern const std::string_view kInspectorPage;

}  // namespace loom::inspect
