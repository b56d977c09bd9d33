// How a data subject's name is shown and journaled when its bytes may not be UTF-8. New
// subjects are UTF-8 (a run, the key store and the log refuse any other), but a home from a
// build before that check may hold one in another encoding; erasure must still reach it
// (docs/adr/0025-subjects-that-are-not-utf8.md). Control events and reports stay UTF-8:
// they show such a subject with its stray bytes escaped and name its exact bytes in hex.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "loom/json/json.h"

namespace loom::compliance {

// The subject for a message or a report: UTF-8 as it is, each byte outside UTF-8 as \xNN.
std::string shownSubject(std::string_view subject);

// Sets data["subject"] to shownSubject(subject) and, when the subject is not UTF-8,
// data["subjectHex"] to its bytes in lower-case hex: the control event stays UTF-8 and still
// names the exact bytes.
void putSubject(json::object& data, std::string_view subject);

// The command that erases `subject`: `loom erase NAME`, or `loom erase --subject-hex HEX` for
// one that is not UTF-8 (what a message tells the operator to run).
std::string eraseCommand(std::string_view subject);

// The subject `data` names (putSubject's inverse): subjectHex's bytes when present, else its
// "subject". InvalidArgumentError when neither is a string, or subjectHex is not hex.
std::string subjectOf(const json::object& data);

// The bytes a `--subject-hex` names; InvalidArgumentError when `hex` is not an even number of
// hex digits, or names no byte.
std::string subjectFromHex(std::string_view hex);

}  // namespace loom::compliance
