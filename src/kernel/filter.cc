#include "kernel/filter.h"

namespace loom::kernel {

bool matches(const ExecutionFilter& f, const ExecutionInfo& info) {
  if (!f.afterId.empty() && info.id <= f.afterId) return false;
  if (f.workflow && info.workflow != *f.workflow) return false;
  if (f.subject && info.subject != f.subject) return false;
  if (f.status && info.status != *f.status) return false;
  if (f.endedBeforeMillis) {
    if (!info.endedAtMillis || *info.endedAtMillis >= *f.endedBeforeMillis) return false;
  }
  return true;
}

}  // namespace loom::kernel
