// The Model and Tool conformance suites (tests/conformance), unchanged, for a model and a tool
// written in JavaScript: the objects a user writes, made into the core's Model and Tool by the
// addon's code (js_effects.cc), called from the suites' threads as the agent loop calls them.
// run(objects) runs the suites on a thread of their own (the event loop stays free to answer
// the calls) and resolves to their exit code; the factories make each JavaScript object on the
// event loop and wait for it.
#include <gtest/gtest.h>
#include <napi.h>

#include <future>

#include "js_app.h"
#include "model_conformance.h"
#include "tool_conformance.h"

namespace loom::agent::conformance {
namespace {

struct Objects {
  std::shared_ptr<node::Door> door;
  node::SharedFn makeModel, makeOverloaded, makeMalformed;  // () or (turns) -> model object
  node::SharedFn echo, fails;                                // tools
};
Objects* gObjects = nullptr;

// Calls `fn` on the event loop with `args` and waits for the object it returns.
node::SharedObject objectFrom(const node::SharedFn& fn, json::value args) {
  std::promise<node::SharedObject> made;
  gObjects->door->send([&](Napi::Env env) {
    Napi::Value v = fn->Call({node::toJs(env, args)});
    made.set_value(node::keepObject(gObjects->door, v.As<Napi::Object>()));
  });
  return made.get_future().get();
}

ModelMade modelFrom(const node::SharedFn& fn, json::value args = nullptr) {
  return ModelMade{node::jsModel(gObjects->door, "javascript", objectFrom(fn, std::move(args))),
                   nullptr};
}

ModelFactory javascriptModels() {
  return {"JavaScript",
          [](const std::vector<Turn>& turns) {
            json::array script;
            for (const auto& t : turns) {
              script.push_back(json::object{{"answer", t.answer}, {"tool", t.tool},
                                            {"arguments", t.arguments}});
            }
            return modelFrom(gObjects->makeModel, std::move(script));
          },
          [] { return modelFrom(gObjects->makeOverloaded); },
          [] { return modelFrom(gObjects->makeMalformed); }};
}

ToolFactory javascriptTools() {
  auto definition = [](std::string name) {
    return agent::ToolDefinition{std::move(name), "Conformance probe", json::object{{"type", "object"}}};
  };
  return {"JavaScript",
          [definition] {
            return ToolMade{node::jsTool(gObjects->door, definition("echo"), false, gObjects->echo), nullptr};
          },
          [definition] {
            return ToolMade{node::jsTool(gObjects->door, definition("fails"), false, gObjects->fails), nullptr};
          }};
}

INSTANTIATE_TEST_SUITE_P(Models, ModelConformance, ::testing::Values(javascriptModels()),
                         [](const auto& info) { return info.param.name; });
INSTANTIATE_TEST_SUITE_P(Tools, ToolConformance, ::testing::Values(javascriptTools()),
                         [](const auto& info) { return info.param.name; });

// run({makeModel, makeOverloaded, makeMalformed, echo, fails}) -> Promise<exit code>
Napi::Value run(const Napi::CallbackInfo& info) {
  Napi::Object o = info[0].As<Napi::Object>();
  auto door = std::make_shared<node::Door>(info.Env());
  auto fn = [&](const char* name) { return node::keepFn(door, o.Get(name).As<Napi::Function>()); };
  gObjects = new Objects{door, fn("makeModel"), fn("makeOverloaded"), fn("makeMalformed"),
                         fn("echo"), fn("fails")};
  return node::offThread(info.Env(), []() -> node::Done {
    int argc = 1;
    char name[] = "loom_conformance";
    char* argv[] = {name, nullptr};
    ::testing::InitGoogleTest(&argc, argv);
    int code = RUN_ALL_TESTS();
    return [code](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, code); };
  });
}

}  // namespace
}  // namespace loom::agent::conformance

namespace {
Napi::Object initConformance(Napi::Env env, Napi::Object exports) {
  exports.Set("run", Napi::Function::New(env, loom::agent::conformance::run));
  return exports;
}
}  // namespace

NODE_API_MODULE(loom_conformance, initConformance)
