// The Model SPI conformance suite (model_conformance.cc), shared by every binary that
// instantiates it: tests/conformance (the scripted and OpenAI-compatible models) and the Python
// package's (a model written in Python, through the binding). A factory makes a model that
// answers turn i (the step id "<loop>#turn:<i>:model") as the test scripts it.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "loom/agent/model.h"
#include "loom/json/json.h"

namespace loom::agent::conformance {

// What one turn of the model says: an answer, or one call of `tool` with `arguments`.
struct Turn {
  std::string answer;
  std::string tool;
  json::object arguments;
};

// A model under test and whatever must outlive it (a server).
struct ModelMade {
  std::shared_ptr<Model> model;
  std::shared_ptr<void> keepAlive;
  ~ModelMade() { model.reset(); }  // the model (its connections) goes before its server
};

struct ModelFactory {
  std::string name;
  // A model whose turn i (from 1) says turns[i - 1].
  std::function<ModelMade(const std::vector<Turn>& turns)> make;
  // A model whose next completion meets a retryable fault (a server that answers 503); null
  // when the implementation has none.
  std::function<ModelMade()> makeUnavailable;
  // A model whose completion of turn 2 cannot be a valid answer (a reply that is not a chat
  // completion; a turn past the script).
  std::function<ModelMade()> makeMalformed;
};

class ModelConformance : public ::testing::TestWithParam<ModelFactory> {};

}  // namespace loom::agent::conformance
