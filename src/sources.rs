//! The published sources the project's claims come from, cited by title, author and address
//! (output, help, lessons and docs cite these, never a development path).
//!
//! Where the project's copy of an article does not carry its author or address, the field says
//! so rather than guessing.

use serde::Serialize;

/// One published source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Source {
    /// A short name used in tables and notes, e.g. `FA2 counts article`.
    pub short: &'static str,
    /// Title as published (the two articles are in Chinese; an English gloss follows in
    /// parentheses).
    pub title: &'static str,
    /// Author or publishing site.
    pub author: &'static str,
    /// Address (URL), or why there is none.
    pub address: &'static str,
    /// Date of publication, `YYYY-MM-DD`, when known.
    pub date: Option<&'static str>,
}

impl Source {
    /// `title — author, address (date)`: the one-line citation.
    pub fn cite(&self) -> String {
        let date = self.date.map(|d| format!(" ({d})")).unwrap_or_default();
        format!("{} — {}, {}{date}", self.title, self.author, self.address)
    }
}

/// The article on instruction counts of FlashAttention-2's forward kernel, Triton against
/// PyTorch (LDSM / LDSM.T / HMMA per loop copy and per kernel; 2048 / 15360 / 8704 executions;
/// GEMM counting rules for m16n8k16 with ldmatrix.x4).
pub const FA2_COUNTS: Source = Source {
    short: "FA2 counts article",
    title: "从零开始写Qwen3 (Writing Qwen3 from scratch): FlashAttention-2 forward, Triton vs PyTorch, \
            seen from the SASS (LDSM/HMMA counts)",
    author: "author not named in the copy the project has",
    address: "address not recorded in the copy the project has",
    date: None,
};

/// The article on FlashAttention v1 → v2 in Triton (loop orders and their DRAM traffic, grid
/// sizes, the `tl.trans(k)` bank conflicts measured with Nsight Compute, occupancy on sm_75).
pub const FA_ARCHAEOLOGY: Source = Source {
    short: "FA v1→v2 article",
    title: "FlashAttention的Triton性能考古学：从v1到v2的GPU内核演进分析 (FlashAttention performance \
            archaeology in Triton: from v1 to v2)",
    author: "blog.hotdry.top",
    address: "https://blog.hotdry.top/posts/2025/12/24/flash-attention-triton-performance-archaeology/",
    date: Some("2025-12-24"),
};

/// FlashAttention-2's paper, for the v2 loop order and its I/O (Algorithm 1 writes O and the
/// logsumexp L).
pub const FA2_PAPER: Source = Source {
    short: "FlashAttention-2 paper",
    title: "FlashAttention-2: Faster Attention with Better Parallelism and Work Partitioning",
    author: "Tri Dao",
    address: "https://arxiv.org/abs/2307.08691",
    date: Some("2023-07-17"),
};

/// FlashAttention's paper, for the v1 loop order and its I/O analysis (Theorem 2).
pub const FA1_PAPER: Source = Source {
    short: "FlashAttention paper",
    title: "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
    author: "Tri Dao, Daniel Y. Fu, Stefano Ermon, Atri Rudra, Christopher Ré",
    address: "https://arxiv.org/abs/2205.14135",
    date: Some("2022-05-27"),
};

/// Every source, in the order the README lists them.
pub const ALL: [Source; 4] = [FA2_COUNTS, FA_ARCHAEOLOGY, FA1_PAPER, FA2_PAPER];

/// The sources whose short name occurs in `text` (in [`ALL`]'s order): what a lesson's claims,
/// narrative and notes cite.
pub fn cited_in(text: &str) -> Vec<Source> {
    ALL.into_iter().filter(|s| text.contains(s.short)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_name_no_development_path() {
        for s in ALL {
            let c = s.cite();
            assert!(!c.contains("seed") && !c.contains("shared/"), "{c}");
            assert!(c.contains(s.title) && c.contains(s.author), "{c}");
        }
        assert!(FA_ARCHAEOLOGY.cite().contains("https://blog.hotdry.top/"));
        assert_eq!(
            cited_in("(FA v1→v2 article) and the FA2 counts article"),
            vec![FA2_COUNTS, FA_ARCHAEOLOGY]
        );
    }
}
