//! `penumbra.zone(name, fn, ...)`, `penumbra.plot(name, value)` and `penumbra.frameMark()`: Tracy
//! zones and plots named by the script, and frame marks between the stages of a run. Without the
//! `tracy` feature the zone is a plain call and the plot and the mark are no-ops (they still
//! check their arguments, so a script behaves the same either way).

use mlua::{Lua, MultiValue, Table};

use super::{caller_location, function};

/// Distinct plot names a state may create (each is leaked once for Tracy).
#[cfg(feature = "tracy")]
const MAX_PLOTS: usize = 256;

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    module.raw_set(
        "zone",
        function(lua, "penumbra.zone", |call| {
            let name = call.string(0, "name")?;
            let f = call.function(1, "fn")?;
            let (file, line) = caller_location(call.lua).unwrap_or_default();
            let _span = crate::profile::span(&name, "penumbra.zone", &file, line);
            f.call::<MultiValue>(call.rest(2))
        })?,
    )?;
    module.raw_set(
        "plot",
        function(lua, "penumbra.plot", |call| {
            let name = call.string(0, "name")?;
            let value = call.number(1, "value")?;
            #[cfg(feature = "tracy")]
            {
                let host = crate::host::Host::of(call.lua);
                let mut plots = host.plots.borrow_mut();
                let plot = match plots.get(&name) {
                    Some(plot) => *plot,
                    None if plots.len() >= MAX_PLOTS => {
                        return Err(call.error(format!(
                            "name: a script may use at most {MAX_PLOTS} plot names"
                        )));
                    }
                    None => {
                        let plot = tracy_client::PlotName::new_leak(name.clone());
                        plots.insert(name, plot);
                        plot
                    }
                };
                if let Some(client) = tracy_client::Client::running() {
                    client.plot(plot, value);
                }
            }
            #[cfg(not(feature = "tracy"))]
            let _ = (name, value);
            Ok(())
        })?,
    )?;
    module.raw_set(
        "frameMark",
        function(lua, "penumbra.frameMark", |call| {
            if !call.arg(0).is_nil() {
                return Err(call.error("takes no arguments"));
            }
            penumbra_core::frame_mark!();
            Ok(())
        })?,
    )?;
    Ok(())
}
