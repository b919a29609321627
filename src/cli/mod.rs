//! The subcommands of the `penumbra` command, one module each.
