// The agent step-id grammar (effects/step_ids.h): exact, with no leniency, because the
// claim-check's scope guard and the agent loop's replay both key on it.
#include "effects/step_ids.h"

#include <gtest/gtest.h>

namespace loom::effects {
namespace {

TEST(StepIds, EachKindRoundTrips) {
  auto model = parseAgentStepId(modelStepId("helper", 3));
  ASSERT_TRUE(model);
  EXPECT_EQ(model->loop, "helper");
  EXPECT_EQ(model->turn, 3);
  EXPECT_EQ(model->kind, AgentStepKind::kModel);
  EXPECT_EQ(model->toolIndex, -1);

  auto tool = parseAgentStepId(toolStepId("helper", 12, 0));
  ASSERT_TRUE(tool);
  EXPECT_EQ(tool->kind, AgentStepKind::kTool);
  EXPECT_EQ(tool->turn, 12);
  EXPECT_EQ(tool->toolIndex, 0);

  auto compact = parseAgentStepId(compactStepId("helper", 7));
  ASSERT_TRUE(compact);
  EXPECT_EQ(compact->kind, AgentStepKind::kCompact);
  EXPECT_EQ(modelStepId("a.b", 1), "a.b#turn:1:model");
  EXPECT_EQ(toolStepId("a", 2, 10), "a#turn:2:tool:10");
}

TEST(StepIds, ALoopNameMayHoldTheMarkerOnlyBeforeTheLastOne) {
  auto id = parseAgentStepId("outer#turn:1:model#turn:2:tool:1");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->loop, "outer#turn:1:model");
  EXPECT_EQ(id->turn, 2);
  EXPECT_EQ(id->toolIndex, 1);
}

TEST(StepIds, AnythingOffTheGrammarIsNotAnAgentStep) {
  for (const char* bad :
       {"", "step-1", "#turn:1:model", "a#turn:0:model", "a#turn:01:model", "a#turn:-1:model",
        "a#turn:+1:model", "a#turn:1:Model", "a#turn:1:model:", "a#turn:1:tool", "a#turn:1:tool:",
        "a#turn:1:tool:01", "a#turn:1:tool:-1", "a#turn:1:tool:1x", "a#turn::model", "a#turn:1",
        "a#turn:1:compact:0", "a#turn:99999999999999999999:model", "a#turn: 1:model"}) {
    EXPECT_FALSE(parseAgentStepId(bad)) << bad;
  }
}

TEST(StepIds, OnlyToolFramesAreToolStepIds) {
  EXPECT_TRUE(isAgentToolStepId("helper#turn:4:tool:2"));
  EXPECT_FALSE(isAgentToolStepId("helper#turn:4:model"));
  EXPECT_FALSE(isAgentToolStepId("helper#turn:4:compact"));
  EXPECT_FALSE(isAgentToolStepId("fetch_report"));
}

}  // namespace
}  // namespace loom::effects
