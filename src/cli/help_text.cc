// Help text shared by `loom --help`, `loom run --help` and docs/cli.md.
#include "command.h"

namespace loom::cli {

const std::string_view kAbout =
    "Loom runs workflows and agents as durable executions. Every step's output is recorded in the "
    "execution's log (in loom.db in the home folder) before the workflow sees it, so a run that "
    "stops, crashes or waits for a signal is continued by `loom resume`, which replays the "
    "recorded steps instead of running them again.";

const std::string_view kPostgresHelp =
    "PostgreSQL: with LOOM_DATABASE_URL set (a libpq URL; the password is never printed), every\n"
    "command keeps its runs, blobs, keys and kill switch in that server's schema\n"
    "(LOOM_DATABASE_SCHEMA, default loom; create it with `loom db migrate`) instead of the\n"
    "home's loom.db, so workers on many machines share them. A config file's [storage] url\n"
    "does the same for the commands given that file.";

const std::string_view kExitCodesHelp =
    "Exit codes:\n"
    "  0  success, including a run that parked (it waits for a signal: `loom signal`)\n"
    "  1  failure: a runtime error, an invalid config or agent app file (every problem is\n"
    "     named by its option path), or a run that ended `failed` (see `loom log <id>`)\n"
    "  2  usage error: unknown subcommand or flag, missing argument, malformed JSON argument\n"
    "Every error is one line on stderr, \"loom: <message>\", that says what to do next.";

const std::string_view kAgentAppHelp =
    "Agent apps: `loom run APP.toml` runs the agent that file defines ([agent], [model],\n"
    "[[tools]]; docs/config.md, examples/agents/). Its prompt is --prompt TEXT, else --input\n"
    "JSON (an object's \"prompt\", or the whole value), else the file's agent.prompt. Config\n"
    "groups in the file ([execution], [security], [storage], ...) apply to the run; --home and\n"
    "--durability, when given, win over storage.home and storage.eventStore.durability. The\n"
    "execution's input records the file's absolute path, so `loom resume ID` and `loom signal`\n"
    "load the same file again: keep it where it is until the run has ended. Check a file first\n"
    "with `loom config check APP.toml`.";

const std::string_view kDurabilityHelp =
    "Durability (the global flag --durability MODE, before or after the subcommand):\n"
    "  full    (default) every commit is fsynced before the workflow goes on, so a recorded\n"
    "          step survives a process crash and a power loss. Concurrent commits in one\n"
    "          process share one fsync (group commit).\n"
    "  normal  a commit survives a crash of the loom process (kill -9), but the last commits\n"
    "          can be lost on a power loss or an OS crash; a resume then runs those steps\n"
    "          again. Faster where fsync is slow.\n"
    "Choose full when a step must not run twice after a power cut (it pays, sends, deploys);\n"
    "choose normal for throughput when re-running the last few steps is harmless.";

}  // namespace loom::cli
