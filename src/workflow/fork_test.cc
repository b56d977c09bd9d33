// Fork and rerun (fork.h, ADR 0030): a new run from a recorded run's log up to a step, on the
// code at hand; the source's log is left byte for byte as it was; a rerun of a failed run runs
// only its failed step again.
#include "loom/workflow/fork.h"

#include <gtest/gtest.h>

#include "loom/kernel/memory_event_store.h"
#include "loom/util/clock.h"
#include "loom/util/error.h"
#include "loom/workflow/runtime.h"

namespace loom::workflow {
namespace {

using kernel::ExecutionStatus;

class ForkTest : public ::testing::Test {
 protected:
  ForkTest() {
    // a, b, c in order; c's answer says which code ran it; "tool" fails while broken_.
    workflows_.add("w", "", [this](WorkflowContext& ctx) {
      json::value a = ctx.step("a", [this] { return json::value(++runs_["a"]); });
      ctx.step("b", [this] {
        ++runs_["b"];
        if (broken_) throw FailedPreconditionError("the tool is broken");
        return json::value("b");
      });
      json::value c = ctx.step("c", [this] {
        ++runs_["c"];
        return json::value(code_);
      });
      return json::value(json::object{{"a", a}, {"c", c}, {"input", ctx.input()}});
    });
  }

  std::unique_ptr<WorkflowRuntime> runtime(const std::string& version) {
    RuntimeOptions options;
    options.clock = clock_;
    options.workers = 1;
    options.codeVersion = version;
    code_ = version;
    return std::make_unique<WorkflowRuntime>(store_, workflows_, tasks_, nullptr, options);
  }

  std::vector<std::string> texts(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& e : store_.read(id)) out.push_back(kernel::toText(e));
    return out;
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  kernel::MemoryEventStore store_{clock_};
  WorkflowRegistry workflows_;
  effects::TaskRegistry tasks_;
  std::map<std::string, int> runs_;
  std::string code_;
  bool broken_ = false;
};

TEST_F(ForkTest, AForkAtAStepRunsFromThereOnTheCodeAtHandAndLeavesTheSourceAsItWas) {
  ASSERT_EQ(runtime("v1")->start("w", json::value("in"), {.id = "src"}).status,
            ExecutionStatus::kCompleted);
  const std::vector<std::string> before = texts("src");
  clock_->advance(1'000);

  RunResult fork = runtime("v2")->fork("src", {.atStep = "b", .id = "f"});
  EXPECT_EQ(fork.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(fork.output, json::parse(R"({"a":1,"c":"v2","input":"in"})", "expected"))
      << "a is the source's recorded answer, c the new code's";
  EXPECT_EQ(runs_["a"], 1) << "a step before the fork point ran again";
  EXPECT_EQ(runs_["b"], 2);
  EXPECT_EQ(fork.replayedSteps, 1);
  EXPECT_EQ(texts("src"), before) << "the source's log changed";
  const auto started = store_.read("f").front().data;
  EXPECT_EQ(started.at("codeVersion"), "v2") << "the fork is pinned to the code it runs on";
  EXPECT_EQ(started.at("forkedFrom"), json::parse(R"({"id":"src","seq":3})", "expected"));
}

TEST_F(ForkTest, AForkAtASeqWithANewInputReplacesTheInputAndCopiesTheStepsBeforeIt) {
  runtime("v1")->start("w", json::value("in"), {.id = "src"});
  RunResult fork = runtime("v1")->fork("src", {.atSeq = 4, .input = json::value("other")});
  EXPECT_EQ(fork.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(fork.output.at("input"), "other");
  EXPECT_EQ(runs_["b"], 1) << "seq 3 (step b) was copied";
  EXPECT_EQ(runs_["c"], 2);
  EXPECT_EQ(fork.id.size(), 26U) << "a fresh id";
}

TEST_F(ForkTest, ARerunOfAFailedRunRunsOnlyItsFailedStepAgainAfterTheFix) {
  broken_ = true;
  RunResult failed = runtime("v1")->start("w", json::value("in"), {.id = "src"});
  ASSERT_EQ(failed.status, ExecutionStatus::kFailed);
  const std::vector<std::string> before = texts("src");
  broken_ = false;  // the tool is fixed

  RunResult rerun = runtime("v2")->rerun("src", "again");
  EXPECT_EQ(rerun.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(rerun.id, "again");
  EXPECT_EQ(runs_["a"], 1) << "a recorded step ran again";
  EXPECT_EQ(runs_["b"], 2) << "the failed step ran once more";
  EXPECT_EQ(runs_["c"], 1);
  EXPECT_EQ(texts("src"), before);
  EXPECT_EQ(store_.info("src")->status, ExecutionStatus::kFailed) << "the source stays failed";

  try {
    runtime("v2")->rerun("again", "");
    FAIL() << "a completed run was rerun";
  } catch (const FailedPreconditionError& e) {
    EXPECT_NE(std::string(e.what()).find("did not fail"), std::string::npos) << e.what();
  }
}

TEST_F(ForkTest, AForkPointThatIsNotInTheLogOrAnIdInUseIsRefusedAndNothingIsWritten) {
  runtime("v1")->start("w", json::value("in"), {.id = "src"});
  auto v1 = runtime("v1");
  EXPECT_THROW(v1->fork("src", {.atStep = "zzz", .id = "f"}), NotFoundError);
  EXPECT_THROW(v1->fork("src", {.atSeq = 1, .id = "f"}), InvalidArgumentError);
  EXPECT_THROW(v1->fork("src", {.atSeq = 99, .id = "f"}), InvalidArgumentError);
  EXPECT_THROW(v1->fork("src", {.id = "f"}), InvalidArgumentError) << "no point";
  EXPECT_FALSE(store_.info("f")) << "a refused fork wrote a log";
  EXPECT_THROW(v1->fork("src", {.atStep = "b", .id = "src"}), AlreadyExistsError);
  EXPECT_THROW(v1->fork("nope", {.atStep = "b"}), NotFoundError);
}

}  // namespace
}  // namespace loom::workflow
