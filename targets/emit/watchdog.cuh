// Cake watchdog (`cakec emit --watchdog`, on under `cakec run`): every lm.wait spins with a
// bounded budget. When a wait outlives it, the waiting warp writes one record (block, warp,
// wait site, stage, parity, phases it saw) into a host-mapped log and raises an abort flag
// that every other wait polls, so all warps leave the kernel (PTX `exit`, not `trap`: the
// CUDA context survives for the next launch). docs/run.md describes the log; the host side is
// cakec/feedback/watchdog.py. Appended after the prelude and the target's support headers;
// CAKE_WD_BUDGET_NS is defined by the emitter just before this header.
#ifndef CAKE_WATCHDOG_CUH
#define CAKE_WATCHDOG_CUH

// One record: 16 words, the layout cakec/feedback/watchdog.py reads (RECORD_WORDS).
#define CAKE_WD_RECORD_WORDS 16u
struct CakeWdLog {
  u32 count;     // records written (may exceed capacity: the rest were dropped)
  u32 capacity;  // records that fit after the header (set by the host)
  u32 fired;     // 1 once any wait expired
  u32 pad[13];
  u32 rec[1];    // capacity * CAKE_WD_RECORD_WORDS words
};

// Set by the host after the module loads (cuModuleGetGlobal): the log's device address,
// and the flag it clears before a launch; polled only after a failed probe.
__device__ CakeWdLog* cake_wd_log;
__device__ volatile u32 cake_wd_abort;
// Warps whose role code ran to its end (bit = warp), cleared at kernel entry.
__shared__ u32 cake_wd_done;

// %globaltimer: nanoseconds.
__device__ __forceinline__ u64 cake_wd_now() {
  u64 t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// One probe of the phase of `parity`: try_wait on sm_90+, test_wait before.
__device__ __forceinline__ bool cake_wd_probe(u32 bar, u32 parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  u32 done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
#else
  return cake_mbar_try_wait(bar, parity);
#endif
}

// Mark this warp's role code finished (lane 0 of the thread's warp; for single-thread roles
// the emitter calls it inside the elected thread's block).
__device__ __forceinline__ void cake_wd_role_done(u32 warp) {
  atomicOr(&cake_wd_done, 1u << (warp & 31u));
}

// Record why this thread leaves (expired: 1 if its own budget ran out, 0 if it saw the
// abort flag while waiting), then exit. One record per warp: the lowest active lane writes.
__device__ __forceinline__ void cake_wd_leave(u32 bar, u32 parity, u32 site, u32 stage,
                                              u32 seen, u64 waited_ns, u32 expired) {
  if (expired) {
    cake_wd_abort = 1u;
    __threadfence();
  }
  const u32 lane = cake_lane_id();
  CakeWdLog* log = cake_wd_log;
  if (log != nullptr && (__activemask() & ((1u << lane) - 1u)) == 0u) {
    const u32 slot = atomicAdd(&log->count, 1u);
    if (expired) log->fired = 1u;
    if (slot < log->capacity) {
      u64 raw;
      asm volatile("ld.volatile.shared.b64 %0, [%1];" : "=l"(raw) : "r"(bar));
      volatile u32* r = log->rec + slot * CAKE_WD_RECORD_WORDS;
      r[0] = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      r[1] = threadIdx.x / 32u;
      r[2] = site;
      r[3] = stage;
      r[4] = parity;
      r[5] = seen;
      r[6] = (u32)(waited_ns / 1000ull);  // microseconds
      r[7] = expired;
      r[8] = cake_wd_done;
      r[9] = lane;
      r[10] = (u32)raw;
      r[11] = (u32)(raw >> 32);
    }
    __threadfence_system();
  }
  asm volatile("exit;");
}

// lm.wait under the watchdog: the first probe is the plain fast path; a failed one starts
// the clock. The abort flag and the clock are read every 16 probes (an L2 read each).
__device__ __forceinline__ void cake_wd_wait(u32 bar, u32 parity, u32 site, u32 stage,
                                             u32 seen) {
  if (cake_wd_probe(bar, parity)) return;
  const u64 start = cake_wd_now();
  for (u32 n = 1;; ++n) {
    if (cake_wd_probe(bar, parity)) return;
    if ((n & 15u) == 0u) {
      const u64 waited = cake_wd_now() - start;
      if (cake_wd_abort) cake_wd_leave(bar, parity, site, stage, seen, waited, 0u);
      if (waited > (u64)CAKE_WD_BUDGET_NS)
        cake_wd_leave(bar, parity, site, stage, seen, waited, 1u);
    }
  }
}

#endif  // CAKE_WATCHDOG_CUH
