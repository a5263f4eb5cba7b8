//! `ppspp lab`: run scenarios in the deterministic simulator, and sweeps
//! over them.

pub mod run;
pub mod sweep;

use clap::Subcommand;

/// What `ppspp lab` does.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Run one scenario (the built-in flash crowd without SCENARIO).
    Run(run::RunArgs),
    /// Run a scenario over a grid of parameter values and seeds.
    Sweep(sweep::SweepArgs),
}

/// Runs a `ppspp lab` subcommand.
pub fn run(cmd: &LabCommand) -> anyhow::Result<()> {
    match cmd {
        LabCommand::Run(a) => run::run(a),
        LabCommand::Sweep(a) => sweep::run(a),
    }
}
