// kernels.lock (legacy and current format): parse_lock_file and commit_for; a current-format lock
// that parses is serialised again and must parse to the same locks.
#include "fuzz_util.h"
#include "khub/protocol/lock.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto lock = khub::protocol::parse_lock_file(khub_fuzz::text(data, size));
  if (!lock) return 0;
  (void)lock->commit_for("kernels-community/activation");
  for (const auto& l : lock->legacy) (void)lock->commit_for(l.repo_id);
  if (lock->format == khub::protocol::LockFormat::Legacy) {
    (void)khub::protocol::serialize_legacy_locks(lock->legacy);
  } else {
    auto text = khub::protocol::serialize_kernel_locks(lock->current);
    if (text) {
      auto again = khub::protocol::parse_lock_file(*text);
      if (!again) khub_fuzz::invariant_failed("serialize_kernel_locks output does not parse");
      if (again->current != lock->current) khub_fuzz::invariant_failed("lock round trip changed the locks");
    }
  }
  return 0;
}
