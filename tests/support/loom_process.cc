#include "support/loom_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <iterator>
#include <sstream>
#include <thread>

namespace loom::testing {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string Outcome::error() const {
  json::value v;
  try {
    v = json::parse(out, "loom stdout");
  } catch (const std::exception&) {
    return err;  // no JSON on stdout: the plain error line
  }
  const auto* top = v.if_object();
  const auto* e = top != nullptr ? top->if_contains("error") : nullptr;
  if (e == nullptr || !e->is_object() || !e->as_object().contains("message")) return err;
  std::string message(e->as_object().at("message").as_string());
  EXPECT_EQ(err.find(message), std::string::npos)
      << "--json: the error is the JSON value, not a stderr line too: " << err;
  return message;
}

json::value Outcome::json() const {
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << "expected one line: " << out;
  try {
    return json::parse(out, "loom stdout");
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\nstdout: " << out << "\nstderr: " << err;
    return nullptr;
  }
}

std::string loomBinary() {
  const char* dir = std::getenv("LOOM_TEST_BIN_DIR");
  if (dir == nullptr) {
    throw std::runtime_error(
        "LOOM_TEST_BIN_DIR is not set; run the tests with ctest, or set "
        "it to the build folder that holds the loom binary");
  }
  return (std::filesystem::path(dir) / "loom").string();
}

Child::Child(const std::vector<std::string>& args, const TempDir& dir,
             const std::vector<std::string>& env) {
  static int counter = 0;
  ++counter;
  outPath_ = dir / ("child-" + std::to_string(counter) + ".out");
  errPath_ = dir / ("child-" + std::to_string(counter) + ".err");
  std::string binary = loomBinary();
  std::vector<std::string> argvText = {binary};
  argvText.insert(argvText.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argvText) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envText;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view entry(*e);
    bool overridden = false;
    for (const auto& mine : env) {
      auto name = mine.substr(0, mine.find('=') + 1);
      if (entry.substr(0, name.size()) == name) overridden = true;
    }
    if (!overridden) envText.emplace_back(entry);
  }
  envText.insert(envText.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : envText) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    // The child: only async-signal-safe calls until exec.
    int out = ::open(outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(126);
    ::execve(binary.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

bool Child::exited() {
  if (reaped_) return true;
  pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return reaped_;
}

void Child::kill(int signal) {
  if (!reaped_) ::kill(pid_, signal);
}

Outcome Child::wait(int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (!exited()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "loom did not end within " << timeoutMs << " ms; killing it";
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Outcome o;
  if (WIFEXITED(status_)) o.exitCode = WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) o.termSignal = WTERMSIG(status_);
  o.out = readFile(outPath_);
  o.err = readFile(errPath_);
  return o;
}

std::string Child::outSoFar() const { return readFile(outPath_); }

bool Child::waitForOutput(const std::string& needle, int timeoutMs) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
  while (outSoFar().find(needle) == std::string::npos) {
    if (exited()) {
      ADD_FAILURE() << "loom ended before it printed \"" << needle << "\"";
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "loom did not print \"" << needle << "\" within " << timeoutMs << " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

Outcome runLoom(const std::vector<std::string>& args, const TempDir& dir,
                const std::vector<std::string>& env) {
  Child child(args, dir, env);
  return child.wait();
}

std::vector<std::string> readLines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string fileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool folderContains(const std::string& folder, const std::string& needle) {
  for (const auto& f : std::filesystem::recursive_directory_iterator(folder)) {
    if (f.is_regular_file() && fileText(f.path().string()).find(needle) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void writeExecutable(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

bool processRunning(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string field;
  for (int i = 0; i < 3 && stat >> field; ++i) {
  }
  return field != "Z" && field != "X";
}

std::vector<Outcome> runLoomAll(const std::vector<std::vector<std::string>>& commands,
                                const TempDir& dir, const std::vector<std::string>& env,
                                std::size_t parallel) {
  std::vector<Outcome> outcomes;
  // The first alone: it may make the home the others use.
  for (std::size_t start = 0; start < commands.size(); start += start == 0 ? 1 : parallel) {
    std::vector<std::unique_ptr<Child>> batch;
    std::size_t end = start == 0 ? 1 : std::min(commands.size(), start + parallel);
    for (std::size_t i = start; i < end; ++i) {
      batch.push_back(std::make_unique<Child>(commands[i], dir, env));
    }
    for (auto& child : batch) outcomes.push_back(child->wait());
  }
  return outcomes;
}

}  // namespace loom::testing
