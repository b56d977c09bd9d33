// JSON values and their text. Loom's values are boost::json values; this header adds the few
// operations every module needs: canonical text, its UTF-8 byte length (how log and state
// sizes are measured), parsing with typed errors, and checked field access.
// Thread-safety: free functions over values the caller owns.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/string.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom::json {

using boost::json::array;
using boost::json::object;
using boost::json::value;

// Compact JSON text of a value (no spaces; object members in insertion order).
std::string toText(const value& v);
// UTF-8 byte length of toText(v), without keeping the text.
std::size_t textBytes(const value& v);
// Appends toText(v) to `out` without a temporary string; returns the bytes appended.
std::size_t appendText(std::string& out, const value& v);
// Appends `s` as a JSON string literal (quoted, escaped); returns the bytes appended.
std::size_t appendQuoted(std::string& out, std::string_view s);

// Parses JSON text. On malformed text throws InvalidArgumentError whose message starts with
// `what` (for example "--input") and says where the text went wrong.
// Nesting limits (docs/spec/events.md, "Nesting"): a value entering a run (an input, a tool or
// model result, a signal payload) may nest at most kMaxValueDepth arrays and objects; what
// Loom stores around it (events, transcripts, snapshots, wrappers) adds a few levels, and the
// reader (parse) accepts kMaxStoredDepth, so no accepted value makes a stored one unreadable.
inline constexpr std::size_t kMaxValueDepth = 32;
inline constexpr std::size_t kMaxStoredDepth = 64;

// How many arrays and objects nest in `v` at its deepest (a scalar: 0). Stops counting past
// `limit` (returns limit + 1), so a hostile value costs at most a walk to that depth.
std::size_t depthOf(const value& v, std::size_t limit = kMaxStoredDepth);

// Parses JSON text nesting at most kMaxStoredDepth levels; InvalidArgumentError naming `what`.
value parse(std::string_view text, std::string_view what);
// parse, for a text Loom itself stored (an event, control event, snapshot or archive row): its
// strings may hold bytes that are not UTF-8, which builds before the UTF-8 checks wrote (a data
// subject given in another encoding); they are read back as the bytes they are, so an old home's
// rows stay readable (and such a subject erasable). Every text from outside goes through parse.
value parseStored(std::string_view text, std::string_view what);

// Checked access for reading stored or user-supplied objects. Each throws
// InvalidArgumentError naming `key` when the member is missing or has the wrong type.
const value& require(const object& o, std::string_view key);
const boost::json::string& requireString(const object& o, std::string_view key);
int64_t requireInt(const object& o, std::string_view key);
const object& requireObject(const object& o, std::string_view key);
// Optional members: absent (or null) gives nullopt; a wrong type still throws.
std::optional<std::string> optionalString(const object& o, std::string_view key);
std::optional<int64_t> optionalInt(const object& o, std::string_view key);

// Human-readable name of a value's kind ("object", "string", ...), for error messages.
std::string_view kindName(const value& v);

}  // namespace loom::json
