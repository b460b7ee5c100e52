/*
 * A wall clock that a test can step, for a real redis-server (test/support/shifted-redis.ts).
 * Loaded with LD_PRELOAD, it adds an offset to the wall clock: CLOCK_REALTIME (and its coarse variant),
 * gettimeofday() and time(). The monotonic clocks are left alone, as a real step (NTP, a VM restored, an
 * operator's `date -s`) leaves them. The offset, in whole milliseconds (negative: behind), is read from
 * the file named by POOLSCOPE_CLOCK_OFFSET_FILE, at most every 2 ms of real time, so a test steps the
 * clock by rewriting the file (a missing or unreadable file means no offset).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime(void) {
  static clock_gettime_fn real;
  clock_gettime_fn fn = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!fn) {
    fn = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
    __atomic_store_n(&real, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

static long long now_monotonic_ns(void) {
  struct timespec ts;
  real_clock_gettime()(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The offset in ns: the file's value, re-read once the cached one is 2 ms old. */
static long long offset_ns(void) {
  static long long cached_ns, read_at_ns = -1;
  long long now = now_monotonic_ns();
  long long at = __atomic_load_n(&read_at_ns, __ATOMIC_ACQUIRE);
  if (at >= 0 && now - at < 2000000LL) return __atomic_load_n(&cached_ns, __ATOMIC_ACQUIRE);
  long long ms = 0;
  const char *path = getenv("POOLSCOPE_CLOCK_OFFSET_FILE");
  FILE *file = path ? fopen(path, "r") : NULL;
  if (file) {
    if (fscanf(file, "%lld", &ms) != 1) ms = 0;
    fclose(file);
  }
  __atomic_store_n(&cached_ns, ms * 1000000LL, __ATOMIC_RELEASE);
  __atomic_store_n(&read_at_ns, now, __ATOMIC_RELEASE);
  return ms * 1000000LL;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
  int rc = real_clock_gettime()(clock, ts);
  if (rc != 0 || (clock != CLOCK_REALTIME && clock != CLOCK_REALTIME_COARSE)) return rc;
  long long ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec + offset_ns();
  ts->tv_sec = ns / 1000000000LL;
  ts->tv_nsec = ns % 1000000000LL;
  return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
  (void)tz;
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
