//! Command-line definitions (clap derive: the low layer) and dispatch. Each subcommand lives in
//! its own file with its arguments and its `run`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Appends one formatted line to a `String` buffer (writing to a `String` cannot fail).
macro_rules! outln {
    ($o:expr) => {
        $o.push('\n')
    };
    ($o:expr, $($arg:tt)*) => {{
        $o.push_str(&format!($($arg)*));
        $o.push('\n');
    }};
}

mod lessons;
pub mod out;
mod sim_bank;
mod sim_counts;
mod sim_frag;
mod sim_replay;
mod sim_traffic;
mod tui_cmd;
mod verify;

/// Exit code for bad input or any other error.
pub const EXIT_ERROR: u8 = 2;
/// Exit code of `verify` when a check disagrees with the hardware.
pub const EXIT_MISMATCH: u8 = 1;
/// Exit code of `verify` when no GPU (driver, device, NVRTC) is available.
pub const EXIT_NO_GPU: u8 = 3;

/// tilelab: see inside a tensor-core tile kernel, one warp instruction at a time.
#[derive(Parser, Debug)]
#[command(name = "tilelab", version, about, long_about = None)]
pub struct Cli {
    /// Colour output: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, global = true, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
    #[command(subcommand)]
    pub cmd: Command,
}

/// Top-level subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Simulate shared-memory requests, fragments and tiled kernels on the CPU.
    Sim {
        #[command(subcommand)]
        cmd: SimCommand,
    },
    /// Step through a lesson's tile in the terminal.
    Tui(tui_cmd::TuiArgs),
    /// Run the lessons' kernels on an NVIDIA GPU and check the simulator against the hardware.
    Verify(verify::VerifyArgs),
    /// List the lessons.
    Lessons(lessons::LessonsArgs),
}

/// `tilelab sim …` subcommands.
#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// A warp reading a tile: bank grid, wavefronts per request, conflict rate.
    BankConflicts(sim_bank::BankArgs),
    /// Predict wavefronts for recorded requests (JSON, the format of shared/hw/h200_wavefronts.json).
    Replay(sim_replay::ReplayArgs),
    /// ldmatrix fragment maps (lane -> elements, element -> lane).
    Ldmatrix(sim_frag::LdmatrixArgs),
    /// mma.sync fragment maps of A, B, C/D.
    Mma(sim_frag::MmaArgs),
    /// LDSM / LDSM.T / HMMA counts of tiled kernels (GEMM, FlashAttention-2).
    Counts(sim_counts::CountsArgs),
    /// Global-memory traffic of FlashAttention v1 vs v2 loop orders.
    Traffic(sim_traffic::TrafficArgs),
    /// Blocks per SM, active warps and occupancy from per-architecture limits.
    Occupancy(sim_counts::OccupancyArgs),
}

/// Parses the command line. Help and version go to stdout as clap writes them; usage errors are
/// printed as one line (`tilelab: error: …`, with clap's tip if it has one) and exit with 2.
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        if !e.use_stderr() {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        let msg = match e.kind() {
            clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            | clap::error::ErrorKind::MissingSubcommand => missing_subcommand(),
            _ => one_line(&e.render().to_string()),
        };
        eprintln!("tilelab: error: {msg}");
        ExitCode::from(EXIT_ERROR)
    })
}

/// "`tilelab sim` needs a subcommand; allowed: …" for the deepest command the arguments name.
fn missing_subcommand() -> String {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut path = vec![cmd.get_name().to_string()];
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if let Some(long) = arg.strip_prefix("--") {
            // `--opt value` (not `--opt=value`) consumes the next argument.
            let takes_value = cmd
                .get_arguments()
                .any(|a| a.get_long() == Some(long) && a.get_action().takes_values());
            if takes_value {
                args.next();
            }
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        match cmd.find_subcommand(&arg) {
            Some(sub) => {
                let sub = sub.clone();
                path.push(sub.get_name().to_string());
                cmd = sub;
            }
            None => break,
        }
    }
    let subs: Vec<&str> = cmd
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|n| *n != "help")
        .collect();
    format!(
        "'{}' needs a subcommand; allowed: {}; see '{} --help'",
        path.join(" "),
        subs.join(", "),
        path.join(" ")
    )
}

/// clap's multi-line error as one line: the message, its tip, and where to look for help.
fn one_line(rendered: &str) -> String {
    let mut msg = String::new();
    let mut tip = None;
    let mut in_msg = false;
    for line in rendered.lines().map(str::trim) {
        if let Some(m) = line.strip_prefix("error: ") {
            msg = m.to_string();
            in_msg = true;
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tip.get_or_insert_with(|| t.to_string());
            in_msg = false;
        } else if line.is_empty() || line.starts_with("Usage:") || line.starts_with("For more") {
            in_msg = false;
        } else if in_msg {
            msg.push(' ');
            msg.push_str(line);
        }
    }
    if msg.is_empty() {
        msg = rendered
            .lines()
            .next()
            .unwrap_or("invalid arguments")
            .trim()
            .to_string();
    }
    match tip {
        Some(t) => format!("{msg} ({t}); see 'tilelab --help'"),
        None => format!("{msg}; see 'tilelab --help'"),
    }
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    out::set_color(&cli.color);
    match cli.cmd {
        Command::Sim { cmd } => match cmd {
            SimCommand::BankConflicts(a) => sim_bank::run(a),
            SimCommand::Replay(a) => sim_replay::run(a),
            SimCommand::Ldmatrix(a) => sim_frag::run_ldmatrix(a),
            SimCommand::Mma(a) => sim_frag::run_mma(a),
            SimCommand::Counts(a) => sim_counts::run_counts(a),
            SimCommand::Traffic(a) => sim_traffic::run(a),
            SimCommand::Occupancy(a) => sim_counts::run_occupancy(a),
        },
        Command::Tui(a) => tui_cmd::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Lessons(a) => lessons::run(a),
    }
}
