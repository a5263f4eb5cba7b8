//! `ppspp lab`: run scenarios in the deterministic simulator, sweeps over
//! them, and scenarios in real time on real sockets.

pub mod emulate;
pub mod run;
pub mod sweep;
mod table;

use clap::Subcommand;

/// What `ppspp lab` does.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Run one scenario (the built-in flash crowd without SCENARIO).
    Run(run::RunArgs),
    /// Run one scenario in real time: every peer a real node on its own
    /// loopback address, its datagrams shaped by the network model.
    Emulate(emulate::EmulateArgs),
    /// Run a scenario over a grid of parameter values and seeds.
    Sweep(sweep::SweepArgs),
    /// Write the report of a results folder again: a sweep's (sweep.html)
    /// if it holds sweep.csv, else a run's (report.html).
    Report(ReportArgs),
}

/// Arguments of `ppspp lab report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// A run's or a sweep's results folder.
    pub dir: std::path::PathBuf,
}

/// Runs a `ppspp lab` subcommand.
pub fn run(cmd: &LabCommand) -> anyhow::Result<()> {
    match cmd {
        LabCommand::Run(a) => run::run(a),
        LabCommand::Emulate(a) => emulate::run(a),
        LabCommand::Sweep(a) => sweep::run(a),
        LabCommand::Report(a) => {
            let (written, file) = if a.dir.join(ppspp_lab::report::SWEEP_CSV).is_file() {
                (
                    ppspp_lab::report::write_sweep_report(&a.dir),
                    ppspp_lab::report::SWEEP_HTML,
                )
            } else {
                (
                    ppspp_lab::report::write_report(&a.dir),
                    ppspp_lab::report::REPORT_HTML,
                )
            };
            written.map_err(|e| anyhow::anyhow!("{}: {e}", a.dir.display()))?;
            println!("{}", a.dir.join(file).display());
            Ok(())
        }
    }
}
