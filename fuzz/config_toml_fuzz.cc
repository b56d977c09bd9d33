// The TOML loader of loom.toml and agent app files (app/config_file.h): every bad file is a
// ConfigError listing what is wrong, never a crash or an untyped exception.
#include "fuzz_support.h"
#include "loom/agent_app/agent_app.h"
#include "loom/app/config_file.h"

// Agent app files too: their sections join the table first.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  loom::agent_app::registerAgentAppSections();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace loom;
  fuzz::refusesOnlyWithTypedErrors(
      [&] { app::parseConfigToml(fuzz::textOf(data, size), "fuzz.toml"); });
  return 0;
}
