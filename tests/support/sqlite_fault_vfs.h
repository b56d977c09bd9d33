// SqliteFaultVfs: SQLite's own files as a test wants them to behave. While one lives it is the
// default VFS of the process: every file SQLite opens goes through it to the real one, and a
// test can make the writes or the flushes of a chosen file fail (a disk error, a full disk) or
// watch every flush that succeeded (a power-loss model: what a flush left is what survives).
// One at a time. Faults may be set while SQLite works on other threads; the thread whose call
// fails finds errno set as the OS would have (ENOSPC for SQLITE_FULL, else EIO).
#pragma once

#include <sqlite3.h>

#include <functional>
#include <string>

namespace loom::testing {

class SqliteFaultVfs {
 public:
  enum class Call { kWrite, kSync };

  SqliteFaultVfs();   // registers itself as the default VFS
  ~SqliteFaultVfs();  // and gives the default back; close what it opened first
  SqliteFaultVfs(const SqliteFaultVfs&) = delete;
  SqliteFaultVfs& operator=(const SqliteFaultVfs&) = delete;

  // From now, `call` on a file whose name (not its folder) is `fileName` ("loom.db",
  // "loom.db-wal") lets `skip` calls pass, then fails the next `count` (-1: every one) with
  // `rc` (SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC, SQLITE_FULL).
  void fail(Call call, std::string fileName, int rc, int count = -1, int skip = 0);
  void clear();        // no call fails any more
  int failed() const;  // calls failed since the last fail()

  // Called after each flush that succeeded, with the flushed file's path.
  std::function<void(const std::string& path)> onSync;
};

}  // namespace loom::testing
