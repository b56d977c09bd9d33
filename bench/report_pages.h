// The page generator of the agent benchmarks (bench/agent_bench.cc, the Python package's
// C++ twin in python/native/py_bench.cc): examples/agents/tools/fetch_report reimplemented
// byte for byte in process.
#pragma once

#include <cstdint>
#include <string>

#include "loom/json/json.h"

namespace loom::bench {

// examples/agents/tools/fetch_report, byte for byte: a Park-Miller sequence seeded by the
// page picks the body's length (1430..3899) and its words.
inline json::value fetchReport(int64_t page) {
  static const char* kWords[] = {"revenue",  "margin", "growth",   "quarter", "region",  "forecast",
                                 "customer", "churn",  "pipeline", "cost",    "segment", "outlook",
                                 "price",    "volume", "channel",  "backlog"};
  int64_t seed = (page * 7919 + 104729) % 2147483647;
  if (seed == 0) seed = 1;
  auto rnd = [&seed] { return seed = (seed * 16807) % 2147483647; };
  std::size_t target = static_cast<std::size_t>(1430 + rnd() % 2470);
  std::string body;
  while (body.size() < target) body += (body.empty() ? "" : " ") + std::string(kWords[rnd() % 16]);
  body.resize(target);
  return json::object{{"id", "r-" + std::to_string(page)},
                      {"title", "Quarterly report, page " + std::to_string(page)},
                      {"page", page},
                      {"body", body}};
}

}  // namespace loom::bench
