// The reader of `outside_map.txt`, included by the core, Lua and Bevy tests of that table
// (`include!` keeps the path relative to this file).

/// The table's rows: the point, the expected exposure, and what the row pins.
pub fn table_rows() -> Vec<([f32; 3], f32, String)> {
    include_str!("outside_map.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f[i].parse::<f32>().unwrap();
            let bits = u32::from_str_radix(f[3], 16).unwrap();
            ([n(0), n(1), n(2)], f32::from_bits(bits), f[4..].join(" "))
        })
        .collect()
}
