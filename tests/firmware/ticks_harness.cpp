// main.cpp's tick counter on the host, against a simulated SysTick (24-bit, counting down from
// 0xFFFFFF, one count per register read) whose interrupt is taken any number of register accesses
// after the wrap: every ticks() must return a time between its entry and its exit.
#include <cinttypes>
#include <cstdint>
#include <cstdio>

static uint64_t now;    // counts since reset: the true time
static uint64_t taken;  // wraps whose interrupt has run
static unsigned delay, waited;
static void interrupt();

struct Reg {
  uint32_t offset;
  operator uint32_t() const {
    interrupt();
    now += 1;
    uint32_t value = offset == 0x018u ? 0xFFFFFFu - (uint32_t)(now & 0xFFFFFFu)
                     : offset == 0xD04u ? ((now >> 24) > taken ? 1u << 26 : 0u) : 0u;
    interrupt();
    return value;
  }
};
#define ZOO_SCS(offset) (Reg{offset})

// @TICKS@

static void interrupt() {
  if ((now >> 24) > taken && waited++ >= delay) {
    taken += 1;
    waited = 0;
    SysTick_Handler();
  }
}

int main() {
  unsigned bad = 0;
  for (uint64_t wrap = 1; wrap <= 3; wrap++) {
    for (uint64_t start = (wrap << 24) - 40; start < (wrap << 24) + 4; start++) {
      for (unsigned d = 0; d <= 12 || d == 1000; d = d == 12 ? 1000 : d + 1) {
        now = start;
        taken = start >> 24;
        systick_wraps = (uint32_t)taken;
        delay = d;
        waited = 0;
        uint64_t got = ticks();
        if (got < start || got > now) {
          if (bad++ < 3) std::printf("ticks %" PRIu64 " outside %" PRIu64 "..%" PRIu64 " (interrupt %u late)\n",
                                     got, start, now, d);
        }
      }
    }
  }
  std::printf("%s %u\n", bad ? "FAIL" : "ok", bad);
  return bad != 0;
}
