//! Shared-memory request statistics as Nsight Compute counts them: the one type every report
//! (CLI, TUI, lessons, counts) sums and displays. Frontends never add wavefronts themselves.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::Serialize;

use super::bank::RequestCost;

/// Totals over warp-level shared-memory requests (see [`super::bank`] for the model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AccessStats {
    /// Warp-level requests (instructions executed).
    pub requests: u64,
    /// Wavefronts (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum`).
    pub wavefronts: u64,
    /// Conflict-free wavefronts (one per unit).
    pub ideal: u64,
    /// Bank conflicts = wavefronts − ideal (`l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum`).
    pub conflicts: u64,
}

impl From<RequestCost> for AccessStats {
    /// One request.
    fn from(c: RequestCost) -> Self {
        AccessStats {
            requests: 1,
            wavefronts: c.wavefronts as u64,
            ideal: c.ideal as u64,
            conflicts: c.bank_conflicts() as u64,
        }
    }
}

impl AccessStats {
    /// Conflicts as a fraction of wavefronts (the FA v1→v2 article's "63.64% of wavefronts"); 0 when empty.
    pub fn conflict_rate(&self) -> f64 {
        if self.wavefronts == 0 {
            0.0
        } else {
            self.conflicts as f64 / self.wavefronts as f64
        }
    }

    /// Mean wavefronts per request (the "n-way" of FA v1→v2 article); 0 when empty.
    pub fn wavefronts_per_request(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.wavefronts as f64 / self.requests as f64
        }
    }

    /// `self + times · o`, each count saturating at `u64::MAX` instead of wrapping.
    pub fn saturating_add_times(self, o: AccessStats, times: u64) -> AccessStats {
        let f = |a: u64, b: u64| a.saturating_add(b.saturating_mul(times));
        AccessStats {
            requests: f(self.requests, o.requests),
            wavefronts: f(self.wavefronts, o.wavefronts),
            ideal: f(self.ideal, o.ideal),
            conflicts: f(self.conflicts, o.conflicts),
        }
    }
}

impl AddAssign for AccessStats {
    fn add_assign(&mut self, o: AccessStats) {
        self.requests += o.requests;
        self.wavefronts += o.wavefronts;
        self.ideal += o.ideal;
        self.conflicts += o.conflicts;
    }
}

impl Add for AccessStats {
    type Output = AccessStats;
    fn add(mut self, o: AccessStats) -> AccessStats {
        self += o;
        self
    }
}

impl Sum for AccessStats {
    fn sum<I: Iterator<Item = AccessStats>>(it: I) -> AccessStats {
        it.fold(AccessStats::default(), Add::add)
    }
}

impl Sum<RequestCost> for AccessStats {
    fn sum<I: Iterator<Item = RequestCost>>(it: I) -> AccessStats {
        it.map(AccessStats::from).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_costs_as_nsight_compute_does() {
        // The FA v1→v2 article's column read of a 64-wide f32 K tile: 32 wavefronts per request (31
        // conflicts), beside a conflict-free request.
        let s: AccessStats = [RequestCost::new(32, 1), RequestCost::new(1, 1)]
            .into_iter()
            .sum();
        assert_eq!(
            (s.requests, s.wavefronts, s.ideal, s.conflicts),
            (2, 33, 2, 31)
        );
        assert_eq!(s.wavefronts_per_request(), 16.5);
        assert!((s.conflict_rate() - 31.0 / 33.0).abs() < 1e-12);
        assert_eq!(AccessStats::default().conflict_rate(), 0.0);
        assert_eq!(s.saturating_add_times(s, 3).wavefronts, 33 + 3 * 33);
        assert_eq!(s.saturating_add_times(s, u64::MAX).requests, u64::MAX);
    }
}
