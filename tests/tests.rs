//! The integration tests: one test binary (as ripgrep's `tests/tests.rs`), one module per file
//! beside this one. `tests/README.md` says which module checks which room and where its expected
//! values come from. Run one module with `cargo test --test tests MODULE::` (for example
//! `cargo test --test tests ptx_hopper::`).

mod common;

mod citations;
mod counts;
mod driver_rules;
mod e2e_tmux;
mod exercises;
mod export;
mod fa3_counts;
mod fn_length;
mod glossary;
mod hopper_h200;
mod house;
mod launch_files;
mod lessons;
mod measured_model;
mod model_props;
mod new_user;
mod ofp8;
mod program_oracles;
mod ptx_cli;
mod ptx_cluster;
mod ptx_fixtures;
mod ptx_grid;
mod ptx_hopper;
mod ptx_isa;
mod ptx_lines;
mod ptx_mma;
mod ptx_mutated;
mod ptx_params;
mod ptx_sync;
mod robust;
mod sass_counts;
mod sass_replay;
mod sim_cli;
mod sim_exec;
mod sim_hopper_cli;
mod tui;
mod tui_ptx;
mod tui_ptx_hopper;
mod verify_hopper;
mod verify_logic;
