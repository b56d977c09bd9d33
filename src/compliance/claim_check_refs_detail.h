// Helpers shared by claim_check_refs.cc and claim_check_refs_others.cc. Private to the
// compliance module. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "loom/content/content_store.h"
#include "loom/json/json.h"

namespace loom::compliance::detail {

// The address of a {"__loomContent": H} object as a view into it, without allocating.
inline std::optional<std::string_view> refView(const json::value& v) {
  const auto* o = v.if_object();
  if (o == nullptr || o->size() != 1) return std::nullopt;
  const auto* h = o->if_contains(content::kContentRefKey);
  if (h == nullptr || !h->is_string()) return std::nullopt;
  std::string_view address(h->get_string().data(), h->get_string().size());
  if (!content::isValidAddress(address)) return std::nullopt;
  return address;
}

}  // namespace loom::compliance::detail
