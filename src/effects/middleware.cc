#include "loom/effects/middleware.h"

#include "content/claim_check_envelope.h"
#include "loom/effects/task.h"

namespace loom::effects {

json::value Next::operator()(const EffectContext& ctx, json::value input) const {
  return chain_->invokeFrom(index_, ctx, std::move(input), terminal_);
}

EffectChain::EffectChain(std::vector<std::shared_ptr<Middleware>> layers)
    : layers_(std::move(layers)) {}

json::value EffectChain::invoke(const EffectContext& ctx, json::value input,
                                Terminal effect) const {
  return invokeFrom(0, ctx, std::move(input), effect);
}

json::value EffectChain::invokeFrom(std::size_t index, const EffectContext& ctx,
                                    json::value input, Terminal effect) const {
  if (index == layers_.size()) {
    // What a tool or a model returns is data from outside: no layer above, and nothing
    // recorded, sees an envelope or content ref Loom did not write. A flow step is the
    // workflow's own code (ctx.step), trusted like the workflow.
    json::value result = effect(ctx, std::move(input));
    if (ctx.taskKind != kKindFlow) {
      content::admitFromOutside(result, "the result of effect '" + ctx.effectId + "'");
    }
    return result;
  }
  return layers_[index]->invoke(ctx, std::move(input), Next(*this, index + 1, effect));
}

std::vector<std::string> EffectChain::layerNames() const {
  std::vector<std::string> out;
  for (const auto& l : layers_) out.emplace_back(l->name());
  return out;
}

const Middleware* EffectChain::find(std::string_view name) const {
  for (const auto& l : layers_) {
    if (l->name() == name) return l.get();
  }
  return nullptr;
}

}  // namespace loom::effects
