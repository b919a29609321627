//! CPU time for the benches' own figures: on a shared machine wall time depends on what else
//! runs, the process's CPU time much less. Included with `#[path = "support/cpu.rs"] mod cpu;`.

/// User + system CPU time of this process so far, all threads (Linux `/proc/self/stat`, clock
/// ticks of 1/100 s), or `None` elsewhere.
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}
