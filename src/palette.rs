//! The one colour palette of tilelab, shared by the terminal UI ([`crate::tui`]), the CLI's
//! coloured text and the SVG pictures ([`crate::viz`]), so a colour means the same thing
//! everywhere. Colours carry two meanings, and only these:
//!
//! * **which unit or register** ([`unit()`]): cool colours (green, cyan, blue, magenta, cycled)
//!   for the first wavefront of each unit of a request (the warp, a half-warp, a quarter-warp or
//!   an 8x8 matrix), for register `rK` of a fragment, or for a group of lanes;
//! * **a bank-conflict replay** ([`replay`]): warm colours (yellow, orange, red, cycled) for
//!   the k-th extra wavefront of a unit, k ≥ 1: what Nsight Compute counts as bank conflicts.
//!
//! Besides those, three plain tones: [`DIM`] (labels, words not read), [`GOOD`] and [`BAD`]
//! (a check that agrees or disagrees), and two for interface chrome, [`ACCENT`] and
//! [`HIGHLIGHT`] (headings, the focused pane), which say nothing about the data. Each swatch has a terminal colour (one of the 16 ANSI
//! colours, so it works in every terminal and respects its theme) and an RGB value for SVG.

/// One of the 16 ANSI terminal colours a swatch uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ansi {
    /// ANSI black (text on warm backgrounds).
    Black,
    /// ANSI green.
    Green,
    /// ANSI cyan.
    Cyan,
    /// ANSI blue.
    Blue,
    /// ANSI magenta.
    Magenta,
    /// ANSI yellow.
    Yellow,
    /// ANSI bright red.
    LightRed,
    /// ANSI red.
    Red,
    /// ANSI bright black.
    DarkGray,
}

/// A colour: its terminal form and its RGB form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Swatch {
    /// Terminal colour.
    pub ansi: Ansi,
    /// Red, green, blue for SVG.
    pub rgb: [u8; 3],
}

impl Swatch {
    /// `#rrggbb`, for SVG `fill`.
    pub fn hex(self) -> String {
        let [r, g, b] = self.rgb;
        format!("#{r:02x}{g:02x}{b:02x}")
    }
}

const UNITS: [Swatch; 4] = [
    Swatch {
        ansi: Ansi::Green,
        rgb: [0x2e, 0x9e, 0x44],
    },
    Swatch {
        ansi: Ansi::Cyan,
        rgb: [0x1c, 0x9b, 0xb0],
    },
    Swatch {
        ansi: Ansi::Blue,
        rgb: [0x3b, 0x5b, 0xdb],
    },
    Swatch {
        ansi: Ansi::Magenta,
        rgb: [0xae, 0x3e, 0xc9],
    },
];

const REPLAYS: [Swatch; 3] = [
    Swatch {
        ansi: Ansi::Yellow,
        rgb: [0xf2, 0xc9, 0x4c],
    },
    Swatch {
        ansi: Ansi::LightRed,
        rgb: [0xf2, 0x99, 0x4a],
    },
    Swatch {
        ansi: Ansi::Red,
        rgb: [0xeb, 0x57, 0x57],
    },
];

/// Labels, axes, words not read.
pub const DIM: Swatch = Swatch {
    ansi: Ansi::DarkGray,
    rgb: [0x88, 0x88, 0x88],
};
/// A check that agrees.
pub const GOOD: Swatch = UNITS[0];
/// A check that disagrees.
pub const BAD: Swatch = REPLAYS[2];
/// Text drawn on a [`replay`] background.
pub const ON_REPLAY: Swatch = Swatch {
    ansi: Ansi::Black,
    rgb: [0, 0, 0],
};
/// Interface chrome, not a meaning of the data: code and headings in text.
pub const ACCENT: Swatch = Swatch {
    ansi: Ansi::Cyan,
    rgb: [0x1c, 0x9b, 0xb0],
};
/// Interface chrome: the focused pane, step titles, key names.
pub const HIGHLIGHT: Swatch = Swatch {
    ansi: Ansi::Yellow,
    rgb: [0xf2, 0xc9, 0x4c],
};
/// SVG fill of a cell with nothing in it.
pub const EMPTY_RGB: &str = "#f3f3f3";

/// Unit, register or lane group `u` (cycled over 4 cool colours).
pub fn unit(u: usize) -> Swatch {
    UNITS[u % UNITS.len()]
}

/// The `k`-th extra wavefront of a unit, `k >= 1` (cycled over 3 warm colours); `k = 0` is
/// not a replay and gets [`unit()`] 0's colour.
pub fn replay(k: usize) -> Swatch {
    match k {
        0 => UNITS[0],
        k => REPLAYS[(k - 1) % REPLAYS.len()],
    }
}

/// The colour of wavefront `w` of a request report: its unit's colour when it is the unit's
/// first wavefront, the replay colour otherwise (the one rule every bank grid uses).
pub fn wavefront(report: &crate::sim::bank::RequestReport, w: usize) -> Swatch {
    match report.replay(w) {
        0 => unit(report.wavefronts[w].unit),
        k => replay(k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_meanings_never_share_a_colour() {
        for u in 0..8 {
            for k in 1..7 {
                assert_ne!(unit(u).ansi, replay(k).ansi);
                assert_ne!(unit(u).rgb, replay(k).rgb);
            }
        }
        assert_eq!(unit(5), unit(1));
        assert_eq!(replay(4), replay(1));
        assert_eq!(unit(0).hex(), "#2e9e44");
    }
}
