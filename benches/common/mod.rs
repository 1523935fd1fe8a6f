//! What the benchmarks measure: wall-clock time, or with `TILELAB_BENCH_CLOCK=cpu` the
//! benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`, Linux), which does not grow while
//! other processes share the cores.

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use std::time::{Duration, Instant};

/// Wall-clock time, or this thread's CPU time when `TILELAB_BENCH_CLOCK=cpu`.
pub struct Clock {
    cpu: bool,
}

impl Clock {
    /// `TILELAB_BENCH_CLOCK=cpu`: CPU time; anything else: wall-clock time.
    pub fn from_env() -> Self {
        Clock {
            cpu: std::env::var("TILELAB_BENCH_CLOCK").is_ok_and(|v| v == "cpu"),
        }
    }
}

/// CPU time of the calling thread.
#[cfg(target_os = "linux")]
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant the kernel knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(not(target_os = "linux"))]
fn thread_cpu_time() -> Duration {
    panic!("TILELAB_BENCH_CLOCK=cpu needs Linux (CLOCK_THREAD_CPUTIME_ID)")
}

impl Measurement for Clock {
    type Intermediate = (Instant, Duration);
    type Value = Duration;
    fn start(&self) -> Self::Intermediate {
        let cpu = if self.cpu {
            thread_cpu_time()
        } else {
            Duration::ZERO
        };
        (Instant::now(), cpu)
    }
    fn end(&self, (wall, cpu): Self::Intermediate) -> Duration {
        if self.cpu {
            thread_cpu_time() - cpu
        } else {
            wall.elapsed()
        }
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, v: &Duration) -> f64 {
        v.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WallTime.formatter()
    }
}
