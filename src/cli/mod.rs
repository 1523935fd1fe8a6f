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

mod conventions;
mod explain;
mod launch;
mod lessons;
pub mod out;
mod ptx;
mod sim_bank;
mod sim_counts;
mod sim_frag;
mod sim_hopper;
mod sim_occupancy;
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
#[command(name = "tilelab", version = env!("TILELAB_VERSION"), about, long_about = None)]
pub struct Cli {
    /// Colour output: auto, always, never. auto colours when stdout is a terminal, unless
    /// NO_COLOR is set (not empty) or CLICOLOR=0; CLICOLOR_FORCE (not 0) colours even when it is
    /// not a terminal; NO_COLOR wins over CLICOLOR_FORCE.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: clap::ColorChoice,
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
    /// Step through a lesson's tile in the terminal, or one warp of your own PTX kernel (--ptx).
    Tui(tui_cmd::TuiArgs),
    /// Run the lessons' kernels (or your PTX kernel, --ptx) on an NVIDIA GPU and check the simulator against the hardware.
    Verify(verify::VerifyArgs),
    /// List the lessons; show one as text, check its numbers, answer its questions, see your progress.
    Lessons(lessons::LessonsArgs),
    /// Explain a term the lessons use (warp, bank, wavefront, ldmatrix, Swizzle<B,M,S>, ...), with its sources.
    Explain(explain::ExplainArgs),
    /// Run one CTA of a PTX kernel on the simulator: per-line wavefronts, bank conflicts, SASS counts.
    Ptx(ptx::PtxArgs),
    /// Print a shell completion script to stdout (e.g. `tilelab completions bash > /etc/bash_completion.d/tilelab`).
    Completions(conventions::CompletionsArgs),
    /// Print the manual page (roff) to stdout (e.g. `tilelab man | man -l -`).
    Man,
}

/// `tilelab sim …` subcommands.
#[derive(Subcommand, Debug)]
pub enum SimCommand {
    /// A warp reading a tile: bank grid, wavefronts per request, conflict rate.
    BankConflicts(sim_bank::BankArgs),
    /// Predict wavefronts for recorded requests (JSON, the format of tests/data/h200_wavefronts.json).
    Replay(sim_replay::ReplayArgs),
    /// ldmatrix fragment maps (lane -> elements, element -> lane).
    Ldmatrix(sim_frag::LdmatrixArgs),
    /// stmatrix fragment maps (which lane's register lands in which row and column).
    Stmatrix(sim_frag::LdmatrixArgs),
    /// mma.sync fragment maps of A, B, C/D.
    Mma(sim_frag::MmaArgs),
    /// Where a TMA box lands in shared memory under a swizzle mode, and how it reads back.
    Tma(sim_hopper::TmaArgs),
    /// wgmma: matrix descriptors, core matrices, the accumulator map and a functional check.
    Wgmma(sim_hopper::WgmmaArgs),
    /// LDSM / LDSM.T / HMMA counts of tiled kernels (GEMM, FlashAttention-2).
    Counts(sim_counts::CountsArgs),
    /// Global-memory traffic of FlashAttention v1 vs v2 loop orders.
    Traffic(sim_traffic::TrafficArgs),
    /// Blocks per SM, active warps and occupancy from per-architecture limits.
    Occupancy(sim_occupancy::OccupancyArgs),
}

/// Parses the command line. Colour is decided first ([`out::set_color`], from `--color` as
/// typed and the environment) and given to clap, so help is coloured exactly when reports are.
/// Help and version go to stdout through [`out::Out`] (a write error other than a closed pipe
/// is an error); usage errors are printed as one line built from clap's structured error
/// ([`usage_error`]) and exit with 2.
pub fn parse() -> Result<Cli, ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let args = help_as_flag(std::env::args_os().collect());
    let choice = color_flag(&args[1.min(args.len())..]);
    let color = out::set_color(choice);
    let cmd = hyphen_values(Cli::command()).color(if color {
        clap::ColorChoice::Always
    } else {
        clap::ColorChoice::Never
    });
    // An option's value may start with `-` (`--top -1`, [`hyphen_values`]), but not with `--`
    // and a letter: `--grid --block 32` lacks --grid's value.
    if let Some(msg) = value_is_an_option(&args) {
        error_line(&msg);
        return Err(ExitCode::from(EXIT_ERROR));
    }
    let parsed = cmd
        .try_get_matches_from(&args)
        .and_then(|m| Cli::from_arg_matches(&m));
    parsed.map_err(|e| {
        if !e.use_stderr() {
            let styled = e.render();
            let text = if color {
                styled.ansi().to_string()
            } else {
                styled.to_string()
            };
            return match out::emit(&text) {
                Err(w) => {
                    error_line(&format!("{w:#}"));
                    ExitCode::from(EXIT_ERROR)
                }
                Ok(()) => ExitCode::SUCCESS,
            };
        }
        let mut msg = match e.kind() {
            clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            | clap::error::ErrorKind::MissingSubcommand => missing_subcommand(&args),
            clap::error::ErrorKind::InvalidUtf8 => not_utf8(&args),
            _ => usage_error(&e, &args),
        };
        // clap may stop at another fault first (`lessons show $'\xff' banks`: one name too
        // many); the argument that is not UTF-8 is named too.
        if let Some((i, bad)) = first_not_utf8(&args)
            && !msg.contains(&bad)
        {
            msg.push_str(&format!(
                " (also, argument {i} is not valid UTF-8: '{bad}')"
            ));
        }
        error_line(&msg);
        ExitCode::from(EXIT_ERROR)
    })
}

/// `tilelab help [SUBCOMMAND…]` as `tilelab [SUBCOMMAND…] --help`: clap's own `help`
/// subcommand refuses `help --help` and `help --color never sim` and, for an unknown name,
/// points to `help … --help`, which fails the same way. Written as the help flag, every form
/// shows the help it names or a usage error that lists the subcommands allowed there and points
/// to a help that works. `--color WHEN` and `-h`/`--help` may stand anywhere after `help`.
fn help_as_flag(mut args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    // The first argument that is neither `--color WHEN` nor `--color=WHEN`.
    let mut i = 1;
    while i < args.len() {
        match args[i].to_str() {
            Some("--color") => i += 2,
            Some(a) if a.starts_with("--color=") => i += 1,
            _ => break,
        }
    }
    if args.get(i).and_then(|a| a.to_str()) != Some("help") {
        return args;
    }
    args.remove(i);
    args.retain(|a| !matches!(a.to_str(), Some("--help" | "-h")));
    args.push("--help".into());
    args
}

/// The command with every value-taking option's value allowed to start with `-` (and every
/// positional's to be a negative number), so that `--top -1`, `--dynamic-smem -1K`,
/// `--addr -lane` and `--arg -1=1` reach the option's parser, which names the whole value and
/// what is allowed, instead of clap's "unexpected argument '-1'". Path options (`--svg`) and
/// the global `--color` keep clap's rule: `--svg --line 3` is a missing value, not a file named
/// `--line`.
fn hyphen_values(cmd: clap::Command) -> clap::Command {
    let path = clap::builder::ValueParser::path_buf().type_id();
    cmd.mut_args(|a| {
        if a.get_id() == "color" || !a.get_action().takes_values() {
            a
        } else if a.is_positional() || a.get_value_parser().type_id() == path {
            a.allow_negative_numbers(true)
        } else {
            a.allow_hyphen_values(true)
        }
    })
    .mut_subcommands(hyphen_values)
}

/// clap value parser of a whole-number flag or positional of type `T`: decimal digits that fit
/// `T`. Its refusal says what is wrong in words ("not a whole number", "negative numbers are
/// not allowed", "too large") and ends with `allowed`, the values the flag takes (its range or
/// set, as its help states them), instead of Rust's "invalid digit found in string" or "number
/// too large to fit in target type". A value of `T` outside `allowed` is refused where it is
/// used, with the same words.
pub(crate) fn whole<T>(
    allowed: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: std::str::FromStr<Err = std::num::ParseIntError> + Clone + Send + Sync + 'static,
{
    move |s: &str| s.parse::<T>().map_err(|e| int_error(s, &e, allowed))
}

/// [`whole`] with the range checked too: `lo..=hi` (as `u64`), named in every refusal.
pub(crate) fn whole_in<T>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static
where
    T: TryFrom<u64> + Clone + Send + Sync + 'static,
{
    move |s: &str| {
        let allowed = format!(
            "{}..={}",
            tilelab::text::group(lo),
            tilelab::text::group(hi)
        );
        let n: u64 = s.parse().map_err(|e| int_error(s, &e, &allowed))?;
        if n < lo || n > hi {
            let what = if n < lo { "too small" } else { "too large" };
            return Err(format!("{what}; allowed: {allowed}"));
        }
        T::try_from(n).map_err(|_| format!("too large; allowed: {allowed}"))
    }
}

/// A whole number's parse error in words, ending in "; allowed: ALLOWED".
fn int_error(s: &str, e: &std::num::ParseIntError, allowed: &str) -> String {
    format!("{}; allowed: {allowed}", int_words(s, e))
}

/// What is wrong with `s`, a whole number that did not parse, in words.
fn int_words(s: &str, e: &std::num::ParseIntError) -> &'static str {
    use std::num::IntErrorKind as K;
    match e.kind() {
        K::Empty => "a whole number is required",
        K::PosOverflow => "too large",
        K::NegOverflow => "negative numbers are not allowed",
        K::Zero => "zero is not allowed",
        _ if s
            .strip_prefix('-')
            .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            "negative numbers are not allowed"
        }
        _ => "not a whole number",
    }
}

/// The `--color` mode as typed (`--color WHEN` or `--color=WHEN`, the last one wins, none after
/// `--`), before clap parses, since clap's help needs it; auto when absent or not a mode (clap
/// then reports a bad value).
fn color_flag(args: &[std::ffi::OsString]) -> clap::ColorChoice {
    use clap::ValueEnum;
    let mut mode = None;
    let mut it = args.iter().map(|a| a.to_str());
    while let Some(a) = it.next() {
        match a {
            Some("--") => break,
            Some("--color") => mode = it.next().flatten(),
            Some(a) if a.starts_with("--color=") => mode = Some(&a["--color=".len()..]),
            _ => {}
        }
    }
    mode.and_then(|m| clap::ColorChoice::from_str(m, false).ok())
        .unwrap_or(clap::ColorChoice::Auto)
}

/// Prints `tilelab: error: MSG` as one line on stderr: newlines become spaces, control
/// characters are escaped and a message past [`tilelab::text::LINE_MAX`] characters is cut
/// ([`tilelab::text::one_line`]), whatever built it. A failing stderr is ignored: there is
/// nowhere left to report it, and the exit status still says what happened.
pub fn error_line(msg: &str) {
    use std::io::Write;
    let one = tilelab::text::one_line(msg);
    let _ = writeln!(std::io::stderr(), "tilelab: error: {one}");
}

/// The first argument after the program's name that is not UTF-8: its 1-based position and
/// its text with those bytes escaped ([`tilelab::text::escape_os`]).
fn first_not_utf8(args: &[std::ffi::OsString]) -> Option<(usize, String)> {
    args.iter()
        .enumerate()
        .skip(1)
        .find(|(_, a)| a.to_str().is_none())
        .map(|(i, a)| (i, tilelab::text::escape_os(a)))
}

/// "argument 2 is not valid UTF-8: 'k\xff'": clap's error for a non-UTF-8 argument names none,
/// so the first such argument is found here and shown with its bytes escaped.
fn not_utf8(args: &[std::ffi::OsString]) -> String {
    let what = match first_not_utf8(args) {
        Some((i, bad)) => format!("argument {i} is not valid UTF-8: '{bad}'"),
        None => "an argument is not valid UTF-8".to_string(),
    };
    format!(
        "{what}; names, numbers and options are UTF-8 text (a file path may be any bytes); see '{} --help'",
        command_path(args).0
    )
}

/// One line from clap's structured error: its kind and context values (the argument, the value
/// given, the values allowed, a suggestion), never its rendered text.
fn usage_error(e: &clap::Error, args: &[std::ffi::OsString]) -> String {
    use clap::error::{ContextKind as K, ErrorKind as E};
    // A value clap read lossily (U+FFFD for bytes that are not UTF-8) is shown from the
    // argument it came from, its bytes escaped; any value's control characters are escaped.
    let get = |k: K| {
        let v = e.get(k).map(|v| v.to_string()).unwrap_or_default();
        if v.contains('\u{fffd}')
            && let Some(a) = args
                .iter()
                .find(|a| a.to_str().is_none() && a.to_string_lossy() == v)
        {
            return tilelab::text::escape_os(a);
        }
        tilelab::text::value(&v).into_owned()
    };
    let (arg, value) = (get(K::InvalidArg), get(K::InvalidValue));
    let mut msg = match e.kind() {
        E::InvalidValue if value.is_empty() => {
            format!("a value is required for '{arg}' but none was supplied")
        }
        E::InvalidValue => format!("invalid value '{value}' for '{arg}'"),
        E::ValueValidation => {
            // A parser's refusal may quote the whole value: it is quoted clipped, as above,
            // so what is allowed stays on the line. A Rust integer parse error (a parser this
            // file does not know) is said in words.
            let raw = e
                .get(K::InvalidValue)
                .map(|v| v.to_string())
                .unwrap_or_default();
            let why = match std::error::Error::source(e) {
                None => String::new(),
                Some(s) => match s.downcast_ref::<std::num::ParseIntError>() {
                    Some(p) => format!(": {}", int_words(&raw, p)),
                    None if raw.chars().count() > tilelab::text::VALUE_MAX => {
                        format!(": {}", s.to_string().replace(&raw, &value))
                    }
                    None => format!(": {s}"),
                },
            };
            format!("invalid value '{value}' for '{arg}'{why}")
        }
        E::UnknownArgument => format!("unexpected argument '{arg}'"),
        E::InvalidSubcommand => {
            let (_, cmd) = command_path(args);
            let subs: Vec<&str> = cmd
                .get_subcommands()
                .map(|c| c.get_name())
                .filter(|n| *n != "help")
                .collect();
            let mut m = format!("unrecognized subcommand '{}'", get(K::InvalidSubcommand));
            if get(K::ValidSubcommand).is_empty() && !subs.is_empty() {
                m.push_str(&format!("; allowed: {}", subs.join(", ")));
            }
            m
        }
        E::MissingRequiredArgument => {
            format!("the following required arguments were not provided: {arg}")
        }
        E::ArgumentConflict if get(K::PriorArg) == arg => {
            format!("the argument '{arg}' cannot be used multiple times")
        }
        E::ArgumentConflict => {
            format!(
                "the argument '{arg}' cannot be used with '{}'",
                get(K::PriorArg)
            )
        }
        E::TooManyValues => format!("unexpected value '{value}' for '{arg}'"),
        E::TooFewValues | E::WrongNumberOfValues => format!(
            "'{arg}' takes {} value(s), got {}",
            get(K::ExpectedNumValues),
            get(K::ActualNumValues)
        ),
        E::NoEquals => format!("'{arg}' needs '=' before its value"),
        kind => match arg.is_empty() {
            true => kind.to_string(),
            false => format!("{kind}: '{arg}'"),
        },
    };
    for k in [K::ValidValue, K::ValidSubcommand] {
        let valid = get(k);
        if !valid.is_empty() {
            msg.push_str(&format!("; allowed: {valid}"));
        }
    }
    for k in [K::SuggestedArg, K::SuggestedSubcommand, K::SuggestedValue] {
        let s = get(k);
        if !s.is_empty() {
            msg.push_str(&format!(" (a similar one exists: '{s}')"));
            break;
        }
    }
    format!("{msg}; see '{} --help'", command_path(args).0)
}

/// The deepest (sub)command the arguments (`args[0]` is the program) name, as typed (`tilelab
/// sim bank-conflicts`), and its clap definition: the help a usage error points to, the
/// subcommands a missing one lists. An argument that is not UTF-8 names no subcommand.
fn command_path(args: &[std::ffi::OsString]) -> (String, clap::Command) {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    // Propagates global flags (`--color`) into the subcommands, so their values are skipped.
    cmd.build();
    let mut path = vec![cmd.get_name().to_string()];
    let mut args = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or("\u{fffd}"));
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
        match cmd.find_subcommand(arg) {
            Some(sub) => {
                let sub = sub.clone();
                path.push(sub.get_name().to_string());
                cmd = sub;
            }
            None => break,
        }
    }
    (path.join(" "), cmd)
}

/// "a value is required for '--grid' but none was supplied ('--block' is an option)" when a
/// value-taking long option (`--opt`, not `--opt=`) is followed by `--` and a letter, walking
/// the subcommands as [`command_path`] does; `None` otherwise (also after `--`).
fn value_is_an_option(args: &[std::ffi::OsString]) -> Option<String> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut path = vec![cmd.get_name().to_string()];
    let mut it = args
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or("\u{fffd}"))
        .peekable();
    while let Some(arg) = it.next() {
        if arg == "--" {
            return None;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let takes_value = cmd
                .get_arguments()
                .any(|a| a.get_long() == Some(long) && a.get_action().takes_values());
            if takes_value {
                let next = it.next()?;
                if next
                    .strip_prefix("--")
                    .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_alphabetic()))
                {
                    return Some(format!(
                        "a value is required for '--{long}' but none was supplied ('{}' is an option); see '{} --help'",
                        tilelab::text::value(next),
                        path.join(" ")
                    ));
                }
            }
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        if let Some(sub) = cmd.find_subcommand(arg) {
            let sub = sub.clone();
            path.push(sub.get_name().to_string());
            cmd = sub;
        }
    }
    None
}

/// "`tilelab sim` needs a subcommand; allowed: …" for the deepest command the arguments name.
fn missing_subcommand(args: &[std::ffi::OsString]) -> String {
    let (path, cmd) = command_path(args);
    let subs: Vec<&str> = cmd
        .get_subcommands()
        .map(|c| c.get_name())
        .filter(|n| *n != "help")
        .collect();
    format!(
        "'{path}' needs a subcommand; allowed: {}; see '{path} --help'",
        subs.join(", ")
    )
}

/// clap value parser of a byte-size flag of at most `u32::MAX` bytes: every spelling of
/// [`tilelab::sim::size`] (`32768`, `32K`, `32KB`, `32KiB`, `2M`), with its one-line refusal.
pub(crate) fn size_u32(s: &str) -> Result<u32, String> {
    tilelab::sim::size::parse_bytes(s, u32::MAX as u64)
        .map(|b| b as u32)
        .map_err(|e| e.to_string())
}

/// [`size_u32`] for a flag of at most `u64::MAX` bytes.
pub(crate) fn size_u64(s: &str) -> Result<u64, String> {
    tilelab::sim::size::parse_bytes(s, u64::MAX).map_err(|e| e.to_string())
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // The mode clap parsed (the same as the one [`parse`] found, but this one is exact).
    out::set_color(cli.color);
    match cli.cmd {
        Command::Sim { cmd } => match cmd {
            SimCommand::BankConflicts(a) => sim_bank::run(a),
            SimCommand::Replay(a) => sim_replay::run(a),
            SimCommand::Ldmatrix(a) => sim_frag::run_ldmatrix(a),
            SimCommand::Stmatrix(a) => sim_frag::run_stmatrix(a),
            SimCommand::Mma(a) => sim_frag::run_mma(a),
            SimCommand::Tma(a) => sim_hopper::run_tma(a),
            SimCommand::Wgmma(a) => sim_hopper::run_wgmma(a),
            SimCommand::Counts(a) => sim_counts::run_counts(a),
            SimCommand::Traffic(a) => sim_traffic::run(a),
            SimCommand::Occupancy(a) => sim_occupancy::run_occupancy(a),
        },
        Command::Tui(a) => tui_cmd::run(a),
        Command::Verify(a) => verify::run(a),
        Command::Lessons(a) => lessons::run(a),
        Command::Ptx(a) => ptx::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Completions(a) => conventions::completions(a),
        Command::Man => conventions::man(),
    }
}
