//! `penumbra.zone(name, fn, ...)`, `penumbra.plot(name, value)` and `penumbra.frameMark()`: Tracy
//! zones and plots named by the script, and frame marks between the stages of a run. Without the
//! `tracy` feature the zone is a plain call and the plot and the mark are no-ops (they still
//! check their arguments, so a script behaves the same either way).

use mlua::{Function, Lua, MultiValue, Table};

use super::export;
use crate::error::caller_location;

/// Distinct plot names a state may create (each is leaked once for Tracy).
#[cfg(feature = "tracy")]
const MAX_PLOTS: usize = 256;

pub(super) fn register(lua: &Lua, module: &Table) -> mlua::Result<()> {
    export(lua, module, "zone", |call| {
        let name = call.string(0, "name")?;
        let f = call.get::<Function>(1, "fn")?;
        let (file, line) = caller_location(call.lua).unwrap_or_default();
        let _span = crate::profile::span(&name, "penumbra.zone", &file, line);
        f.call::<MultiValue>(call.rest(2))
    })?;
    export(lua, module, "plot", |call| {
        let name = call.string(0, "name")?;
        let value = call.number(1, "value")?;
        #[cfg(feature = "tracy")]
        {
            let context = crate::context::ScriptContext::of(call.lua);
            let mut plots = context.plots.borrow_mut();
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
    })?;
    export(lua, module, "frameMark", |call| {
        if !call.arg(0).is_nil() {
            return Err(call.error("takes no arguments"));
        }
        penumbra_core::frame_mark!();
        Ok(())
    })?;
    Ok(())
}
