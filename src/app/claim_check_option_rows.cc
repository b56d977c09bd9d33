#include "claim_check_option_rows.h"

#include "middleware/claim_check/digest_builders.h"
#include "option_row_support.h"

namespace loom::app {
namespace {

using middleware::ClaimCheckConfig;

ClaimCheckConfig& claimCheck(Config& c) {
  if (!c.execution.claimCheck) c.execution.claimCheck.emplace();
  return *c.execution.claimCheck;
}

// A claim-check option's value, or its default when claim-check is unset.
const ClaimCheckConfig& claimCheckOrDefault(const Config& c) {
  static const ClaimCheckConfig kDefault;
  return c.execution.claimCheck ? *c.execution.claimCheck : kDefault;
}

void addDigestEntry(Config& c, const OptionEntry& entry, const std::string& path,
                    ConfigIssues& issues) {
  middleware::DigestSpec spec;
  std::string tool;
  for (const auto& [key, value] : entry) {
    if (key == "name") tool = std::get<std::string>(value);
    if (key == "pick") spec.pick = std::get<std::vector<std::string>>(value);
    if (key == "length") spec.length = std::get<std::string>(value);
    if (key == "preview") spec.preview = std::get<int64_t>(value);
  }
  ConfigIssues problems = middleware::validateDigestSpec(spec, path);
  if (!problems.empty()) {
    issues.insert(issues.end(), problems.begin(), problems.end());
    return;
  }
  claimCheck(c).digestSources[tool] = middleware::describeDigestSpec(spec);
  claimCheck(c).digests[tool] = middleware::buildDigest(std::move(spec));
}

void addClaimCheckTable(std::vector<OptionRow>& rows) {
  OptionRow& r =
      addOptionRow(rows, "execution.claimCheck", OptionType::kTable,
                   "The agent claim-check opt-in (ADR 0140): results of the listed agent "
                   "tools over `inlineCapBytes` go to the content store and the log (and "
                   "the model) get an envelope with a digest instead. Unset: no "
                   "middleware, nothing changes. See docs/claim-check.md.");
  r.set = [](Config& c, OptionValue) { claimCheck(c); };
  r.show = [](const Config& c) {
    return std::string(c.execution.claimCheck ? "on" : "off (unset)");
  };
}

}  // namespace

void addClaimCheckRows(std::vector<OptionRow>& rows) {
  addClaimCheckTable(rows);
  {
    OptionRow& r = addOptionRow(rows, "execution.claimCheck.store", OptionType::kString,
                                "The content store that receives the blobs: `default` is "
                                "storage.contentStore (the one `loom sweep` scans).",
                                "\"default\"");
    r.allowed = {"default"};
    r.set = [](Config& c, OptionValue v) { claimCheck(c).storeName = std::get<std::string>(v); };
    r.get = [](const Config& c) { return OptionValue(claimCheckOrDefault(c).storeName); };
  }
  {
    OptionRow& r =
        addOptionRow(rows, "execution.claimCheck.toolIds", OptionType::kStringList,
                     "Required. The agent tools whose large outputs are offloaded; there "
                     "is no \"all\" (a model must never be listed). Each must name a tool "
                     "of the app: boot (and `loom config check` of an agent app) refuses an "
                     "id no registered task has. The model then sees "
                     "only the envelope and its digest, not these tools' full output: "
                     "list only tools whose output the model does not need in full.");
    r.set = [](Config& c, OptionValue v) {
      claimCheck(c).toolIds = std::get<std::vector<std::string>>(std::move(v));
    };
    r.show = [](const Config& c) {
      const auto& ids = claimCheckOrDefault(c).toolIds;
      return ids ? optionValueText(*ids) : std::string("(missing)");
    };
  }
  {
    OptionRow& r = addOptionRow(rows, "execution.claimCheck.inlineCapBytes", OptionType::kInteger,
                                "Results whose JSON text is at most this many UTF-8 bytes stay "
                                "inline (DEFAULT_CLAIM_CHECK_CAP_BYTES).",
                                "1024");
    r.min = 0;
    r.max = 1 << 30;
    r.set = [](Config& c, OptionValue v) { claimCheck(c).inlineCapBytes = std::get<int64_t>(v); };
    r.get = [](const Config& c) { return OptionValue(claimCheckOrDefault(c).inlineCapBytes); };
  }
  {
    OptionRow& r =
        addOptionRow(rows, "execution.claimCheck.preview", OptionType::kBooleanOrInteger,
                     "Characters of the default digest, a head of the result's JSON text "
                     "(`{preview, truncated: true}`) for tools without a `digests` entry "
                     "(DEFAULT_CLAIM_CHECK_PREVIEW_CHARS); `false` records `{ref, size}` "
                     "only. A tainted result is never previewed.",
                     "256");
    r.min = 0;
    r.max = 1 << 20;
    r.set = [](Config& c, OptionValue v) {
      if (std::holds_alternative<bool>(v)) {
        claimCheck(c).preview =
            std::get<bool>(v)
                ? std::optional<int64_t>(middleware::DEFAULT_CLAIM_CHECK_PREVIEW_CHARS)
                : std::nullopt;
      } else {
        claimCheck(c).preview = std::get<int64_t>(v);
      }
    };
    r.get = [](const Config& c) {
      const auto& p = claimCheckOrDefault(c).preview;
      return p ? OptionValue(*p) : OptionValue(false);
    };
  }
  {
    OptionRow& r =
        addOptionRow(rows, "execution.claimCheck.digests", OptionType::kTableMap,
                     "Per tool id, a declared digest that replaces the preview, built "
                     "from pure parts: `digests.search = { pick = [\"/total\"], length = "
                     "\"/hits\", preview = 80 }`. A digest is prompt text: keep it free "
                     "of untrusted content (it is not fenced).",
                     "{}");
    r.addEntry = addDigestEntry;
    r.show = [](const Config& c) {
      std::string out = "{";
      for (const auto& [tool, source] : claimCheckOrDefault(c).digestSources) {
        out += (out.size() > 1 ? ", " : "") + tool + " = " + source;
      }
      return out + "}";
    };
  }
  addOptionRow(rows, "execution.claimCheck.digests[].pick", OptionType::kStringList,
               "JSON pointers whose values the digest records, by pointer.");
  addOptionRow(rows, "execution.claimCheck.digests[].length", OptionType::kString,
               "A JSON pointer to an array; the digest records its element count.");
  {
    OptionRow& r =
        addOptionRow(rows, "execution.claimCheck.digests[].preview", OptionType::kInteger,
                     "A head of this many characters of the result's JSON text.");
    r.min = 0;
    r.max = 1 << 20;
  }
  {
    OptionRow& r = addOptionRow(rows, "execution.claimCheck.onOffload", OptionType::kCallback,
                                "Called after each offload; a throw is reported through onWarn and "
                                "never fails the tool call.",
                                "none");
    r.support = Support::kCppOnly;
  }
  {
    OptionRow& r =
        addOptionRow(rows, "execution.claimCheck.reclaimable", OptionType::kBooleanOrStringList,
                     "The audit trade (ADR 0140 D6): `true` or a list of tool ids whose "
                     "envelopes carry no `retain`, so the sweep reclaims their blobs after "
                     "the ttl and resolveClaimCheck then returns null. Default: every "
                     "blob is retained while any history cites it.",
                     "false");
    r.set = [](Config& c, OptionValue v) {
      if (std::holds_alternative<bool>(v))
        claimCheck(c).reclaimableAll = std::get<bool>(v);
      else
        claimCheck(c).reclaimable = std::get<std::vector<std::string>>(std::move(v));
    };
    r.show = [](const Config& c) {
      const auto& cc = claimCheckOrDefault(c);
      return cc.reclaimableAll ? std::string("true") : optionValueText(cc.reclaimable);
    };
  }
}

}  // namespace loom::app
