//! Shared-memory request statistics as Nsight Compute counts them: the one type every report
//! (CLI, TUI, lessons, counts) sums and displays. Frontends never add wavefronts themselves.

use std::iter::Sum;
use std::ops::{Add, AddAssign};

use serde::Serialize;

use crate::sim::bank::RequestCost;

/// Totals over warp-level shared-memory requests (see [`crate::sim::bank`] for the model).
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

/// How many "ways" a conflict has, said the one way tilelab, Nsight Compute and the FA v1→v2
/// article mean it: an **N-way bank conflict is a request that takes N wavefronts**
/// (ncu's `L1 Conflicts Shared N-Way`; the article's "6.3-way on average" is its 1,845,667,948
/// wavefronts over 293,601,280 requests), followed by which numbers those are: the wavefronts per
/// request and the ideal per request (1 for a 4-byte load; 4 for a 16-byte load, served a
/// quarter-warp at a time, and for `ldmatrix.x4`, one per matrix), and where the ideal is more
/// than 1, the wavefronts per ideal one (the ways of each quarter-warp or matrix, as the lessons
/// count them). `None` when there is no conflict or no request.
///
/// ```
/// use tilelab_core::sim::stats::ways;
/// assert_eq!(ways(32, 1, 1).unwrap(), "32-way bank conflict (32 wavefronts per request for 1 ideal)");
/// // Triton's line 402: 16 executions of a 16-byte load, as ncu counts them ("32-way").
/// assert_eq!(
///     ways(512, 64, 16).unwrap(),
///     "32-way bank conflict (32 wavefronts per request for 4 ideal, 8 per ideal one)"
/// );
/// assert_eq!(
///     ways(1_845_667_948, 293_601_280, 293_601_280).unwrap(),
///     "6.3-way bank conflicts on average (6.3 wavefronts per request for 1 ideal)"
/// );
/// assert_eq!(ways(4, 4, 1), None);
/// ```
pub fn ways(wavefronts: u64, ideal: u64, requests: u64) -> Option<String> {
    if requests == 0 || ideal == 0 || wavefronts <= ideal {
        return None;
    }
    // n / d as a whole number when it is one, else to one decimal.
    let ratio = |n: u64, d: u64| {
        if n.is_multiple_of(d) {
            (n / d).to_string()
        } else {
            format!("{:.1}", n as f64 / d as f64)
        }
    };
    let w = ratio(wavefronts, requests);
    let each = if ideal == requests {
        String::new()
    } else {
        format!(", {} per ideal one", ratio(wavefronts, ideal))
    };
    let exact = wavefronts.is_multiple_of(requests) && ideal.is_multiple_of(requests);
    let (what, average) = if exact {
        ("bank conflict", "")
    } else {
        ("bank conflicts", " on average")
    };
    Some(format!(
        "{w}-way {what}{average} ({w} wavefronts per request for {} ideal{each})",
        ratio(ideal, requests)
    ))
}

impl AccessStats {
    /// [`ways`] of these totals: "16-way bank conflict (16 wavefronts per request for 1
    /// ideal)"; `None` without conflicts.
    pub fn ways(&self) -> Option<String> {
        ways(self.wavefronts, self.ideal, self.requests)
    }

    /// Conflicts as a fraction of wavefronts (the FA v1→v2 article's "63.64% of wavefronts"); 0 when empty.
    pub fn conflict_rate(&self) -> f64 {
        if self.wavefronts == 0 {
            0.0
        } else {
            self.conflicts as f64 / self.wavefronts as f64
        }
    }

    /// Mean wavefronts per request (the "N-way" of the FA v1→v2 article and of Nsight Compute,
    /// see [`ways`]); 0 when empty.
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
