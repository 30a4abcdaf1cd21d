#include "khub/base/temp_files.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstring>

namespace khub {
namespace {

// Fixed slots: the handler may only read memory that no one frees under it, and call unlink().
constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<bool> ready{false};  // path written and valid
  char path[PATH_MAX] = {};
};
Slot g_slots[kSlots];

extern "C" void remove_and_reraise(int sig) {
  for (auto& s : g_slots)
    if (s.ready.load()) ::unlink(s.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

TempFileGuard::TempFileGuard(const std::filesystem::path& path) {
  const std::string& p = path.native();
  if (p.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].taken.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_slots[i].path, p.c_str(), p.size() + 1);
    g_slots[i].ready.store(true);
    slot_ = i;
    return;
  }
}

TempFileGuard::~TempFileGuard() {
  if (slot_ < 0) return;
  g_slots[slot_].ready.store(false);
  g_slots[slot_].taken.store(false);
}

void remove_temp_files_on_signal() {
  struct sigaction sa {};
  sa.sa_handler = &remove_and_reraise;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace khub
