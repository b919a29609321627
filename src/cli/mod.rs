//! The subcommands of the `penumbra` command, one module each.

pub mod sample;
