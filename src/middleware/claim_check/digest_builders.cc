#include "middleware/claim_check/digest_builders.h"

#include "loom/middleware/claim_check/claim_check.h"

namespace loom::middleware {
namespace {

bool isPointer(const std::string& p) { return p.empty() || p.front() == '/'; }

const json::value* at(const json::value& v, const std::string& pointer) {
  boost::system::error_code ec;
  return v.find_pointer(pointer, ec);
}

}  // namespace

ConfigIssues validateDigestSpec(const DigestSpec& spec, const std::string& path) {
  ConfigIssues issues;
  for (const auto& p : spec.pick) {
    if (!isPointer(p)) {
      issues.push_back(
          {path + ".pick", "\"" + p + "\" is not a JSON pointer (it must start with /)"});
    }
  }
  if (spec.length && !isPointer(*spec.length)) {
    issues.push_back({path + ".length", "\"" + *spec.length + "\" is not a JSON pointer"});
  }
  if (spec.preview && *spec.preview < 0) issues.push_back({path + ".preview", "must be >= 0"});
  if (spec.pick.empty() && !spec.length && !spec.preview) {
    issues.push_back({path, "declares nothing; give pick, length or preview"});
  }
  return issues;
}

DigestFn buildDigest(DigestSpec spec) {
  return [spec = std::move(spec)](const json::value& result, std::string_view text) {
    json::object digest;
    for (const auto& p : spec.pick) {
      const json::value* v = at(result, p);
      digest[p] = v ? *v : json::value();
    }
    if (spec.length) {
      const json::value* v = at(result, *spec.length);
      if (v && v->is_array()) digest["length"] = static_cast<int64_t>(v->get_array().size());
    }
    if (spec.preview) {
      json::value preview = previewOf(text, *spec.preview);
      for (const auto& kv : preview.as_object()) digest[kv.key()] = kv.value();
    }
    return json::value(std::move(digest));
  };
}

std::string describeDigestSpec(const DigestSpec& spec) {
  std::string out = "{";
  auto sep = [&] {
    if (out.size() > 1) out += ", ";
  };
  if (!spec.pick.empty()) {
    out += "pick = [";
    for (std::size_t i = 0; i < spec.pick.size(); ++i) {
      out += (i ? ", \"" : "\"") + spec.pick[i] + "\"";
    }
    out += "]";
  }
  if (spec.length) {
    sep();
    out += "length = \"" + *spec.length + "\"";
  }
  if (spec.preview) {
    sep();
    out += "preview = " + std::to_string(*spec.preview);
  }
  return out + "}";
}

}  // namespace loom::middleware
