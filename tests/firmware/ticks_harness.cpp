// main.cpp's tick counter on the host, against a simulated SysTick: 24-bit, counting down from 0xFFFFFF, one
// count per register read and any number while the program runs between calls. A wrap makes the interrupt
// pending; a wrap while it is still pending is lost in it (the hardware has one pending bit); the CPU takes it
// `hold` counts after it became pending, at a register access or while the program runs.
//   1. The interrupt late by 0 to 12 register accesses, or not taken during the call: every ticks() returns a
//      time between its entry and its exit.
//   2. The interrupt held past the next wrap (QEMU's CPU thread descheduled under load while its timer still
//      fires), with calls 5 to 2^24 - 200 counts apart: the counts never go back, and each difference is the
//      time between the calls.
#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>

static const uint64_t PERIOD = 1u << 24;
static uint64_t now;      // counts since reset: the true time
static uint64_t raised;   // wraps the counter has made
static bool pending;
static uint64_t pending_since, hold;
static void interrupt();
static void advance(uint64_t n);

struct Reg {
  uint32_t offset;
  operator uint32_t() const {
    interrupt();
    advance(1);
    uint32_t value = offset == 0x018u ? 0xFFFFFFu - (uint32_t)(now & 0xFFFFFFu)
                     : offset == 0xD04u ? (pending ? 1u << 26 : 0u) : 0u;
    interrupt();
    return value;
  }
};
#define ZOO_SCS(offset) (Reg{offset})

// @TICKS@

static void interrupt() {
  if (pending && now - pending_since >= hold) {
    pending = false;
    SysTick_Handler();
  }
}

static void advance(uint64_t n) {  // the counter runs n counts: wraps make the interrupt pending, or are lost in it
  for (uint64_t end = now + n; now < end;) {
    uint64_t wrap = (raised + 1) * PERIOD, taken = pending ? pending_since + hold : end;
    now = std::min(end, std::min(wrap, std::max(now, taken)));
    interrupt();  // before a wrap at the same count
    if (now == wrap) {
      raised += 1;
      if (!pending) pending = true, pending_since = now;
    }
  }
}

// A fresh start at `start`, with every wrap before it counted and the tick counter's state cleared.
static void reset(uint64_t start, uint64_t held) {
  now = start;
  raised = start / PERIOD;
  pending = false;
  hold = held;
  systick_wraps = (uint32_t)raised;
  ticks_last = 0;
  ticks_lost = 0;
}

int main() {
  unsigned bad = 0, runs = 0;
  for (uint64_t wrap = 1; wrap <= 3; wrap++) {
    for (uint64_t start = wrap * PERIOD - 40; start < wrap * PERIOD + 4; start++) {
      for (unsigned d = 0; d <= 12 || d == 1000; d = d == 12 ? 1000 : d + 1) {
        reset(start, d);
        uint64_t got = ticks();
        runs++;
        if ((got < start || got > now) && bad++ < 3)
          std::printf("ticks %" PRIu64 " outside %" PRIu64 "..%" PRIu64 " (interrupt %u late)\n", got, start, now, d);
      }
    }
  }
  static const uint64_t gaps[] = {5, 158759, PERIOD / 2, PERIOD - 200, 1000, PERIOD / 3, 7, PERIOD - 300000};
  static const uint64_t holds[] = {PERIOD - 1, PERIOD + 10, PERIOD + 158000, 2 * PERIOD + 1, 3 * PERIOD};
  for (uint64_t held : holds) {
    for (uint64_t start = PERIOD - 2000; start < 3 * PERIOD; start += PERIOD / 7 + 12345) {
      reset(start, held);
      uint64_t before = now, last = ticks(), last_exit = now;
      for (unsigned i = 0; i < 200; i++) {
        advance(gaps[i % (sizeof gaps / sizeof gaps[0])]);
        uint64_t entry = now, got = ticks();
        runs++;
        if ((got < last || got - last < entry - last_exit || got - last > now - before) && bad++ < 6)
          std::printf("ticks %" PRIu64 " after %" PRIu64 ": the calls were %" PRIu64 "..%" PRIu64 " apart "
                      "(interrupt held %" PRIu64 " counts)\n", got, last, entry - last_exit, now - before, held);
        before = entry, last = got, last_exit = now;
      }
    }
  }
  std::printf("%s %u of %u\n", bad ? "FAIL" : "ok", bad, runs);
  return bad != 0;
}
