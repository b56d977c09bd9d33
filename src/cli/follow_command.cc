// `loom follow ID [--after SEQ] [--until-park] [--json]`: a run's events as they are journaled,
// from any process (the run may be running in a worker on another machine), until it ends.
#include <CLI/CLI.hpp>
#include <chrono>
#include <thread>

#include "command.h"
#include "text.h"

namespace loom::cli {
namespace {

struct FollowArgs {
  std::string id;
  int64_t after = 0;
  bool untilPark = false;
  bool json = false;
};

// How often the log is looked at again while nothing new is there.
constexpr auto kLookEvery = std::chrono::milliseconds(100);

}  // namespace

Action setupFollow(CLI::App& command, HomeSession& session) {
  auto args = std::make_shared<FollowArgs>();
  command.add_option("ID", args->id, "The execution to follow (see `loom ls`)")
      ->required()
      ->type_name("");
  command.add_option("--after", args->after,
                     "Only events after this seq: what a follower that saw up to it missed")
      ->type_name("SEQ")
      ->check(CLI::NonNegativeNumber);
  command.add_flag("--until-park", args->untilPark,
                   "Stop at the run's next park too (an approval, a signal, a timer)");
  command.add_flag("--json", args->json, "Print each event as its stored JSON object, one a line");
  addConfigOption(command, session);
  command.footer(
      "Prints the run's events as `loom log` does, then each new one as it is journaled by\n"
      "whatever process runs the run, and returns when the run has ended (completed, failed,\n"
      "cancelled). Each line starts with its seq: `--after SEQ` goes on where a follower that\n"
      "stopped left off, missing nothing and printing nothing twice. Exit 0 when the run\n"
      "completed (or parked, with --until-park), 1 when it failed or was cancelled.");
  return [&session, args] {
    kernel::EventStore& store = session.store(false);
    if (!store.info(args->id)) {
      throw NotFoundError("no execution '" + args->id + "' (see `loom ls`)");
    }
    std::ostream& out = session.out();
    int64_t seen = args->after;
    for (;;) {
      auto now = store.info(args->id);  // read before the scan: nothing is missed
      if (!now) {
        throw NotFoundError("execution '" + args->id + "' is gone from the live store (`loom "
                            "retention run` archived it, or it was erased); `loom log " +
                            args->id + "` reads an archived log");
      }
      const kernel::ExecutionInfo& info = *now;
      if (info.nextSeq - 1 > seen) {
        store.scan(args->id, seen + 1, [&](const kernel::Event& e) {
          out << (args->json ? kernel::toText(e) : eventLine(e)) << '\n';
          seen = e.seq;
        });
        out.flush();
      }
      if (kernel::isEnded(info.status) && seen >= info.nextSeq - 1) {
        return info.status == kernel::ExecutionStatus::kCompleted ? kExitOk : kExitFailure;
      }
      if (args->untilPark && info.status == kernel::ExecutionStatus::kParked &&
          seen >= info.nextSeq - 1) {
        return kExitOk;
      }
      std::this_thread::sleep_for(kLookEvery);
    }
  };
}

}  // namespace loom::cli
