// UTF-8 well-formedness (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
// Loom's JSON reader refuses any other bytes, so a name that goes into a stored JSON text (an
// execution id, a data subject, a control event) is checked before it is written: one that is
// not UTF-8 would make the row it lands in unreadable.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace loom {

bool isValidUtf8(std::string_view text);
// Throws InvalidArgumentError naming `what` and the byte offset when `text` is not UTF-8.
void requireUtf8(std::string_view text, std::string_view what);
// `text` with its well-formed sequences as they are and every other byte as \xNN: always UTF-8,
// for a message or a report that shows a name of unknown encoding.
std::string escapeInvalidUtf8(std::string_view text);

}  // namespace loom
