#include "loom/effects/middleware.h"

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
  if (index == layers_.size()) return effect(ctx, std::move(input));
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
