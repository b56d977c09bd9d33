// The Tool SPI conformance suite (tool_conformance.cc), shared by every binary that
// instantiates it: tests/conformance (function, subprocess and MCP tools) and the Python
// package's (a tool written in Python, through the binding). A factory makes an echoing tool
// (its result carries the "text" argument) and a failing one.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "loom/agent/tool.h"

namespace loom::agent::conformance {

struct ToolMade {
  std::shared_ptr<Tool> tool;
  std::shared_ptr<void> keepAlive;  // a server's client
};

struct ToolFactory {
  std::string name;
  // A tool whose result, as JSON text, contains its "text" argument.
  std::function<ToolMade()> makeEcho;
  // A tool whose every call fails.
  std::function<ToolMade()> makeFailing;
};

class ToolConformance : public ::testing::TestWithParam<ToolFactory> {};

}  // namespace loom::agent::conformance
