//! The outcome of one expected number of a lesson ([`Check`]): its [`CheckStatus`] and what it
//! was compared with ([`Basis`]). Made by [`super::run::check_lesson`] and the PTX checks of
//! [`super::ptx`].

/// The outcome of one expected number.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Check {
    /// What was checked, e.g. `step 3 (ldmatrix.x4) under 'swizzle:3,3,3': wavefronts 4, conflicts 0`.
    pub what: String,
    /// Passed, failed or pending.
    pub status: CheckStatus,
    /// What the lesson's number is compared with; only [`Basis::tests_the_model`] checks say
    /// anything about the simulator.
    pub basis: Basis,
    /// On failure, what the simulator says instead; on pending, why; on a passed model claim,
    /// the model's values ([`super::run::check_model`]).
    pub detail: String,
}

/// What a [`Check`] compares the lesson's number with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The simulator's answer for a step (wavefronts, conflicts, registers, fragment owners)
    /// against the number the lesson states (taken from the articles or the PTX ISA figures).
    Simulator,
    /// The simulator's wavefronts against a request measured on the H200 (`measured` links).
    Measured,
    /// The counts model of a whole kernel (counts, traffic, occupancy, …) against the numbers
    /// the lesson cites from an article or an H200 run (`[[model]]`).
    Model,
    /// The lesson's own arithmetic: an article's formula re-evaluated against the result the
    /// article (or the lesson) states. No model is involved.
    Arithmetic,
    /// The lesson file against itself: its SASS table against the mnemonics of its own steps.
    /// No model is involved (`tilelab verify` checks the steps' mnemonics against the kernel's
    /// cuobjdump listing, and `tests/lessons.rs` against the H200 listings in `tests/data/ptx`).
    Consistency,
}

impl Basis {
    /// True when the check compares the simulator or the counts model with something outside
    /// it (the lesson's sourced number, a measurement, a printed result).
    pub fn tests_the_model(self) -> bool {
        matches!(self, Basis::Simulator | Basis::Measured | Basis::Model)
    }
}

/// Status of a [`Check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// The simulator (or arithmetic) agrees.
    Pass,
    /// It disagrees.
    Fail,
    /// Needs data not given: a hardware-record link when no records are passed.
    Pending,
}
