#include "core/id128.hpp"

#include <sched.h>

namespace snowflake {

void SpinLock::acquire_contended() noexcept {
  for (int spins = 0;; ++spins) {
    if (word.load(std::memory_order_relaxed) == 0 &&
        word.exchange(1, std::memory_order_acquire) == 0)
      return;
    // The holder runs a few instructions; if it was descheduled meanwhile, let it run.
    if (spins >= 100) {
      sched_yield();
      spins = 0;
    } else {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      __asm__ __volatile__("yield");
#endif
    }
  }
}

}  // namespace snowflake
