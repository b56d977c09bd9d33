// loom.node: the C++ core under the `@loomwork/loom` Node.js package (docs/typescript.md).
#include <napi.h>

#include "js_app.h"

namespace {

Napi::Object init(Napi::Env env, Napi::Object exports) {
  loom::node::initApp(env, exports);
  loom::node::initEffects(env, exports);
  loom::node::initWorker(env, exports);
  loom::node::initContent(env, exports);
  exports.Set("version", LOOM_VERSION);
  return exports;
}

}  // namespace

NODE_API_MODULE(loom, init)
