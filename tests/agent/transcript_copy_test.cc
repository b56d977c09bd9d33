// The transcript is lent to the model, never copied per turn (docs/adr/0007): the bytes the
// agent loop allocates between two model calls stay the same at turn 1,000 as at turn 100.
// Folding the state of a long run allocates in proportion to its log, not turns squared.
// Counted by this binary's own operator new, so the test is deterministic and would catch a
// per-turn copy of the transcript coming back anywhere on the path (the loop, the journal,
// the middleware chain, the runtime).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>

#include "agent_fixture.h"
#include "loom/effects/middleware.h"
#include "loom/middleware/retry.h"

namespace {
std::atomic<std::size_t> allocatedBytes{0};
}  // namespace

void* operator new(std::size_t n) {
  allocatedBytes.fetch_add(n, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace loom::testing {
namespace {

// Notes the bytes allocated so far at each call, then answers as the scripted model does.
class MarkingModel : public agent::Model {
 public:
  explicit MarkingModel(std::shared_ptr<agent::Model> inner, std::size_t turns)
      : inner_(std::move(inner)) {
    marks.reserve(turns + 1);
  }
  const std::string& id() const override { return inner_->id(); }
  json::value complete(const effects::EffectContext& ctx,
                       const agent::ModelRequest& request) override {
    marks.push_back(allocatedBytes.load());
    messages = request.messages.size();
    if (marks.size() == 901) {  // what one copy of the transcript at turn 900 allocates
      std::size_t before = allocatedBytes.load();
      json::array copy = request.messages.toArray();
      copyBytesAtTurn900 = allocatedBytes.load() - before;
    }
    return inner_->complete(ctx, request);
  }
  std::vector<std::size_t> marks;
  std::size_t messages = 0;
  std::size_t copyBytesAtTurn900 = 0;

 private:
  std::shared_ptr<agent::Model> inner_;
};

// The median bytes allocated per turn over turns [from, to).
std::size_t medianPerTurn(const std::vector<std::size_t>& marks, std::size_t from, std::size_t to) {
  std::vector<std::size_t> perTurn;
  for (std::size_t t = from; t < to; ++t) perTurn.push_back(marks[t + 1] - marks[t]);
  std::nth_element(perTurn.begin(), perTurn.begin() + perTurn.size() / 2, perTurn.end());
  return perTurn[perTurn.size() / 2];
}

class TranscriptCopy : public AgentFixture,
                       public ::testing::WithParamInterface<agent::ModelInputMode> {};

TEST_P(TranscriptCopy, BytesAllocatedPerTurnDoNotGrowWithTheTranscript) {
  constexpr std::size_t kTurns = 1000;
  auto model = std::make_shared<MarkingModel>(
      std::make_shared<providers::ScriptedModel>("scripted", generatorScript(kTurns)), kTurns);
  agent::registerModel(tasks_, model);
  addTool("fetch_report", [](const json::value& args) {
    return json::value{{"page", args.at("page")}, {"body", std::string(200, 'r')}};
  });
  agent::AgentOptions o;
  o.model = "scripted";
  o.maxTurns = kTurns + 1;
  o.modelInput = GetParam();
  o.tools.push_back(tools_["fetch_report"]->definition());
  agent::registerAgentWorkflow(workflows_, "research", o);
  // A retry layer calls next with a copy of the input on every attempt but the last.
  middleware::RetryConfig retry;
  retry.attempts = 3;
  auto chain = std::make_shared<const effects::EffectChain>(
      std::vector<std::shared_ptr<effects::Middleware>>{
          std::make_shared<middleware::RetryMiddleware>(retry)});
  workflow::RuntimeOptions ro;
  ro.clock = clock_;
  workflow::WorkflowRuntime rt(store_, workflows_, tasks_, chain, ro);
  auto r = rt.start("research", json::value("go"), {.id = "long"});
  ASSERT_EQ(r.status, kernel::ExecutionStatus::kCompleted);
  ASSERT_EQ(model->marks.size(), kTurns + 1);
  ASSERT_GT(model->messages, 2 * kTurns) << "the model was lent the whole transcript";
  std::size_t early = medianPerTurn(model->marks, 100, 200);
  std::size_t late = medianPerTurn(model->marks, 900, 1000);
  std::size_t copy = model->copyBytesAtTurn900;
  if (GetParam() == agent::ModelInputMode::kDelta) {
    EXPECT_LE(late, early * 12 / 10)
        << "bytes per turn at turn 100: " << early << ", at turn 900: " << late
        << "; one copy of the transcript: " << copy;
  } else {
    // Full journaling writes the whole transcript into each model step (its log grows with
    // turns squared, by design), but copies it twice (the journaled input, the event the
    // store keeps) and serialises it once, never once per layer.
    EXPECT_LE(late, early + 3 * copy)
        << "bytes per turn at turn 100: " << early << ", at turn 900: " << late
        << "; one copy of the transcript: " << copy;
  }
}

// Folding an agent's state (`loom state`, `loom export`) rebuilds the model inputs turn by turn:
// the bytes it allocates grow with the log, not with turns squared.
TEST_F(AgentFixture, FoldingTheStateAllocatesInProportionToTheLog) {
  constexpr int64_t kTurns = 1000;
  agent::registerModel(
      tasks_, std::make_shared<providers::ScriptedModel>("scripted", generatorScript(kTurns)));
  addTool("fetch_report", [](const json::value& args) {
    return json::value{{"page", args.at("page")}, {"body", std::string(500, 'r')}};
  });
  agent::AgentOptions o;
  o.model = "scripted";
  o.maxTurns = kTurns + 1;
  o.tools.push_back(tools_["fetch_report"]->definition());
  agent::registerAgentWorkflow(workflows_, "research", o);
  ASSERT_EQ(runtime(store_)->start("research", json::value("go"), {.id = "f"}).status,
            kernel::ExecutionStatus::kCompleted);
  std::vector<kernel::Event> all = store_.read("f");
  std::vector<kernel::Event> half(all.begin(), all.begin() + all.size() / 2);
  auto foldBytes = [](const std::vector<kernel::Event>& events) {
    std::size_t before = allocatedBytes.load();
    json::object state = agent::foldAgentState(events, "research");
    EXPECT_GT(state.at("transcriptBytes").as_int64(), 0);
    return allocatedBytes.load() - before;
  };
  std::size_t halfBytes = foldBytes(half);
  std::size_t allBytes = foldBytes(all);
  EXPECT_LE(allBytes, halfBytes * 25 / 10)
      << "folding " << half.size() << " events allocated " << halfBytes << " bytes, " << all.size()
      << " events " << allBytes;
}

INSTANTIATE_TEST_SUITE_P(Journal, TranscriptCopy,
                         bothJournalModes(), journalModeName);

}  // namespace
}  // namespace loom::testing
