//! The subcommands of the `penumbra` command, one module each.

pub mod demo;
pub mod match_cmd;
pub mod run;
pub mod sample;
