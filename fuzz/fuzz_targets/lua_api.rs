//! The Lua API (`penumbra_lua`) called with arbitrary argument values.
//!
//! Each input becomes a Luau script: a list of statements that create samplers, textures and
//! static-sampler tables (from mostly plausible descriptions) and call every `penumbra.*`
//! function and every method with arbitrary arguments — numbers including NaN, ±inf, huge and
//! negative ones, strings (names, RON, paths that try to leave the root), nested tables,
//! vectors, callbacks that call back into the API, nil — each call inside `pcall`, its first
//! result kept in a small pool that later calls use as receiver or argument. The script runs in
//! a fresh `Runtime` with an 8 MiB heap and a 50 ms deadline.
//!
//! Checks: the Rust side never panics (the fuzzer's panic hook aborts on any panic, even one the
//! API would catch) and no error is an "internal error"; Lua errors, the memory limit and the
//! deadline are all fine.
#![no_main]

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use penumbra_fuzz::Num;
use penumbra_lua::{Runtime, RuntimeOptions};

const POOL: usize = 8;
const MAX_DEPTH: usize = 5;

#[derive(Arbitrary, Debug)]
struct Input {
    /// Lets a statement spin until the deadline (rare: each costs 50 ms).
    spin_key: u8,
    stmts: Vec<Stmt>,
}

#[derive(Arbitrary, Debug)]
enum Stmt {
    Call(u8, Vec<V>),
    Method {
        recv: u8,
        name: u8,
        args: Vec<V>,
        dot: bool,
    },
    Texture(TexIn),
    Sampler(SampIn),
    StaticSamplers(u8),
    Field(u8, Str),
    Meta(u8, u8),
    Repeat(u8, Box<Stmt>),
    Spin,
}

#[derive(Arbitrary, Debug)]
enum V {
    Nil,
    Bool(bool),
    Int(u8),
    Num(Num),
    Wide(f64),
    Str(Str),
    Pool(u8),
    Table(Vec<(Option<Str>, V)>),
    Coord(Vec<Num>),
    Vector([Num; 3]),
    Func(Vec<V>, Option<Box<Stmt>>),
    Rep(u16),
}

#[derive(Arbitrary, Debug)]
enum Str {
    Known(u8),
    Free(String),
}

#[derive(Arbitrary, Debug)]
struct TexIn {
    format: u8,
    dimension: Option<u8>,
    width: u8,
    height: Option<u8>,
    depth: Option<u8>,
    mips: Option<u8>,
    array: Option<u8>,
    data: Option<Vec<Num>>,
    filter: Option<u8>,
    extra: Option<(Str, V)>,
}

#[derive(Arbitrary, Debug)]
struct SampIn {
    filter: u8,
    address: [Option<u8>; 3],
    func: Option<u8>,
    border: Option<V>,
    lod: Option<(Num, Num)>,
    bias: Option<Num>,
    aniso: Option<u8>,
    flags: Option<V>,
    ron: bool,
}

const FUNCS: [&str; 8] = [
    "sampler",
    "staticSamplers",
    "texture",
    "loadTexture",
    "zone",
    "plot",
    "version",
    "noSuchFunction",
];

const METHODS: [&str; 24] = [
    "sampleLevel",
    "sampleGrad",
    "sampleBias",
    "sample",
    "sampleCmp",
    "sampleCmpLevelZero",
    "sampleCmpLevel",
    "gather",
    "gatherCmp",
    "calculateLod",
    "sampleLevelBatch",
    "sampleCmpLevelZeroBatch",
    "desc",
    "lookup",
    "get",
    "names",
    "set",
    "size",
    "fill",
    "generateMips",
    "save",
    "width",
    "nope",
    "__index",
];

const FILTERS: [&str; 12] = [
    "MIN_MAG_MIP_POINT",
    "MIN_MAG_MIP_LINEAR",
    "MIN_MAG_LINEAR_MIP_POINT",
    "ANISOTROPIC",
    "COMPARISON_MIN_MAG_LINEAR_MIP_POINT",
    "COMPARISON_MIN_MAG_MIP_POINT",
    "COMPARISON_ANISOTROPIC",
    "MINIMUM_MIN_MAG_MIP_LINEAR",
    "MAXIMUM_ANISOTROPIC",
    "D3D12_FILTER_MIN_POINT_MAG_MIP_LINEAR",
    "COMPARISON_MIN_MAG_MIP_LINEAR",
    "MIN_LINEAR_MAG_MIP_POINT",
];

const FORMATS: [&str; 12] = [
    "R32_FLOAT",
    "D32_FLOAT",
    "R32_FLOAT_X8X24_TYPELESS",
    "R24_UNORM_X8_TYPELESS",
    "R16_UNORM",
    "D16_UNORM",
    "R16_FLOAT",
    "R8_UNORM",
    "R8G8B8A8_UNORM",
    "R16G16B16A16_FLOAT",
    "R32G32B32A32_FLOAT",
    "R8_UINT",
];

const DIMENSIONS: [&str; 8] = [
    "1D",
    "1DArray",
    "2D",
    "2DArray",
    "3D",
    "Cube",
    "CubeArray",
    "4D",
];
const ADDRESS: [&str; 6] = ["WRAP", "MIRROR", "CLAMP", "BORDER", "MIRROR_ONCE", "SPIRAL"];
const FUNCS_CMP: [&str; 9] = [
    "NEVER",
    "LESS",
    "EQUAL",
    "LESS_EQUAL",
    "GREATER",
    "NOT_EQUAL",
    "GREATER_EQUAL",
    "ALWAYS",
    "NONE",
];

const STRINGS: [&str; 40] = [
    "",
    "full",
    "r",
    "g",
    "b",
    "a",
    "x",
    "average",
    "min",
    "max",
    "PIXEL",
    "VERTEX",
    "ALL",
    "in.png",
    "out.png",
    "sub/dir/x.png",
    "../escape.png",
    "/etc/passwd",
    "./in.png",
    "in.png/",
    "OPAQUE_WHITE",
    "TRANSPARENT_BLACK",
    "OPAQUE_BLACK_UINT",
    "UINT_BORDER_COLOR | NON_NORMALIZED_COORDINATES",
    "NON_NORMALIZED_COORDINATES",
    "(Filter: MIN_MAG_MIP_LINEAR, AddressU: WRAP)",
    "(Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, ComparisonFunc: LESS, ShaderRegister: 1)",
    "[(Filter: MIN_MAG_MIP_POINT, ShaderRegister: 0), (Filter: ANISOTROPIC, ShaderRegister: 0, ShaderVisibility: PIXEL)]",
    "(samplers: {\"a\": (Filter: MIN_MAG_MIP_LINEAR), \"b\": (Filter: MIN_MAG_MIP_POINT, ShaderRegister: 1)})",
    "(Filter: 1e40, MaxLOD: -1, MinLOD: inf)",
    "(",
    "width",
    "format",
    "mipLevels",
    "data",
    "filter",
    "borderColor",
    "flags",
    "coords",
    "\u{0}\u{ff}",
];

const INTS: [i64; 24] = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    -1,
    -8,
    9,
    15,
    16,
    17,
    255,
    256,
    16384,
    16385,
    65535,
    2147483648,
    4294967296,
    9007199254740993,
    -9007199254740993,
];

fn known(list: &[&str], i: u8) -> String {
    lua_string(list[usize::from(i) % list.len()])
}

fn lua_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b" _-./:|(),{}[]".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\{b}");
        }
    }
    out.push('"');
    out
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "(0/0)".into()
    } else if v == f64::INFINITY {
        "math.huge".into()
    } else if v == f64::NEG_INFINITY {
        "(-math.huge)".into()
    } else {
        format!("({v:?})")
    }
}

/// A pool entry: the pool is filled in order, so any index picks a value when there is one.
fn pool(i: u8) -> String {
    format!("P[{i} % math.max(#P, 1) + 1]")
}

struct Writer {
    out: String,
    spin: bool,
    stmts: usize,
    loops: usize,
}

impl Writer {
    fn string(&mut self, s: &Str) -> String {
        match s {
            Str::Known(i) => known(&STRINGS, *i),
            Str::Free(f) => lua_string(&f.chars().take(64).collect::<String>()),
        }
    }

    fn value(&mut self, v: &V, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return "nil".into();
        }
        match v {
            V::Nil => "nil".into(),
            V::Bool(b) => b.to_string(),
            V::Int(i) => INTS[usize::from(*i) % INTS.len()].to_string(),
            V::Num(n) => number(f64::from(n.get())),
            V::Wide(f) => number(*f),
            V::Str(s) => self.string(s),
            V::Pool(i) => pool(*i),
            V::Table(items) => {
                let mut out = String::from("{");
                for (k, v) in items.iter().take(12) {
                    if let Some(k) = k {
                        let k = self.string(k);
                        let _ = write!(out, "[{k}] = ");
                    }
                    let v = self.value(v, depth + 1);
                    out.push_str(&v);
                    out.push_str(", ");
                }
                out.push('}');
                out
            }
            V::Coord(c) => {
                let items: Vec<String> = c
                    .iter()
                    .take(8)
                    .map(|n| number(f64::from(n.get())))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            V::Vector(c) => {
                let [x, y, z] = c.map(|n| number(f64::from(n.get())));
                format!("vector.create({x}, {y}, {z})")
            }
            V::Func(ret, body) => {
                let mut f = String::from("function(...) ");
                if let Some(stmt) = body {
                    let s = self.stmt(stmt, depth + 1);
                    f.push_str(&s);
                    f.push(' ');
                }
                let rets: Vec<String> = ret
                    .iter()
                    .take(5)
                    .map(|v| self.value(v, depth + 1))
                    .collect();
                let _ = write!(
                    f,
                    "return {} end",
                    if rets.is_empty() {
                        "nil".into()
                    } else {
                        rets.join(", ")
                    }
                );
                f
            }
            V::Rep(n) => format!("string.rep(\"x\", {})", n),
        }
    }

    fn args(&mut self, args: &[V], depth: usize) -> String {
        let v: Vec<String> = args
            .iter()
            .take(8)
            .map(|a| self.value(a, depth + 1))
            .collect();
        v.join(", ")
    }

    fn texture(&mut self, t: &TexIn, depth: usize) -> String {
        let mut d = format!(
            "format = {}, width = {}",
            known(&FORMATS, t.format),
            t.width % 18
        );
        if let Some(dim) = t.dimension {
            let _ = write!(d, ", dimension = {}", known(&DIMENSIONS, dim));
        }
        if let Some(h) = t.height {
            let _ = write!(d, ", height = {}", h % 18);
        }
        if let Some(z) = t.depth {
            let _ = write!(d, ", depth = {}", z % 10);
        }
        if let Some(m) = t.mips {
            let _ = write!(d, ", mipLevels = {}", m % 7);
        }
        if let Some(a) = t.array {
            let _ = write!(d, ", arraySize = {}", a % 14);
        }
        if let Some(data) = &t.data {
            let items: Vec<String> = data
                .iter()
                .take(64)
                .map(|n| number(f64::from(n.get())))
                .collect();
            let _ = write!(d, ", data = {{{}}}", items.join(", "));
        }
        if let Some(f) = t.filter {
            let _ = write!(
                d,
                ", mipFilter = {}",
                known(&["average", "min", "max", "median"], f)
            );
        }
        if let Some((k, v)) = &t.extra {
            let k = self.string(k);
            let v = self.value(v, depth + 1);
            let _ = write!(d, ", [{k}] = {v}");
        }
        format!("penumbra.texture({{{d}}})")
    }

    fn sampler(&mut self, s: &SampIn, depth: usize) -> String {
        if s.ron {
            let mut d = format!(
                "Filter: {}",
                FILTERS[usize::from(s.filter) % FILTERS.len()].replace('"', "")
            );
            if let Some(f) = s.func {
                let _ = write!(
                    d,
                    ", ComparisonFunc: {}",
                    FUNCS_CMP[usize::from(f) % FUNCS_CMP.len()]
                );
            }
            if let Some(a) = s.address[0] {
                let _ = write!(d, ", AddressU: {}", ADDRESS[usize::from(a) % ADDRESS.len()]);
            }
            if let Some((lo, hi)) = s.lod {
                let _ = write!(d, ", MinLOD: {:?}, MaxLOD: {:?}", lo.get(), hi.get());
            }
            return format!("penumbra.sampler({})", lua_string(&format!("({d})")));
        }
        let mut d = format!("filter = {}", known(&FILTERS, s.filter));
        for (name, a) in ["addressU", "addressV", "addressW"].iter().zip(s.address) {
            if let Some(a) = a {
                let _ = write!(d, ", {name} = {}", known(&ADDRESS, a));
            }
        }
        if let Some(f) = s.func {
            let _ = write!(d, ", comparisonFunc = {}", known(&FUNCS_CMP, f));
        }
        if let Some(b) = &s.border {
            let b = self.value(b, depth + 1);
            let _ = write!(d, ", borderColor = {b}");
        }
        if let Some((lo, hi)) = s.lod {
            let _ = write!(
                d,
                ", minLOD = {}, maxLOD = {}",
                number(f64::from(lo.get())),
                number(f64::from(hi.get()))
            );
        }
        if let Some(b) = s.bias {
            let _ = write!(d, ", mipLODBias = {}", number(f64::from(b.get())));
        }
        if let Some(a) = s.aniso {
            let _ = write!(d, ", maxAnisotropy = {}", a % 20);
        }
        if let Some(f) = &s.flags {
            let f = self.value(f, depth + 1);
            let _ = write!(d, ", flags = {f}");
        }
        format!("penumbra.sampler({{{d}}})")
    }

    /// One statement: a protected call whose first result goes into the pool.
    fn stmt(&mut self, s: &Stmt, depth: usize) -> String {
        self.stmts += 1;
        if depth > MAX_DEPTH || self.stmts > 200 {
            return String::new();
        }
        let slot = self.stmts % POOL + 1;
        let call = |expr: String| {
            format!(
                "do local ok, r = pcall(function() return {expr} end) \
                 if ok and r ~= nil then if #P < {POOL} then P[#P + 1] = r else P[{slot}] = r end end end"
            )
        };
        match s {
            Stmt::Call(f, args) => {
                let name = FUNCS[usize::from(*f) % FUNCS.len()];
                let args = self.args(args, depth);
                call(format!("penumbra.{name}({args})"))
            }
            Stmt::Method {
                recv,
                name,
                args,
                dot,
            } => {
                let name = METHODS[usize::from(*name) % METHODS.len()];
                let args = self.args(args, depth);
                let sep = if *dot { "." } else { ":" };
                call(format!("{}{sep}{name}({args})", pool(*recv)))
            }
            Stmt::Texture(t) => {
                let t = self.texture(t, depth);
                call(t)
            }
            Stmt::Sampler(s) => {
                let s = self.sampler(s, depth);
                call(s)
            }
            Stmt::StaticSamplers(i) => {
                call(format!("penumbra.staticSamplers({})", known(&STRINGS, *i)))
            }
            Stmt::Field(recv, key) => {
                let key = self.string(key);
                call(format!("{}[{key}]", pool(*recv)))
            }
            Stmt::Meta(recv, op) => {
                let r = pool(*recv);
                call(match op % 4 {
                    0 => format!("tostring({r})"),
                    1 => format!("#{r}"),
                    2 => format!("{r} == {r}"),
                    _ => format!("type({r})"),
                })
            }
            Stmt::Repeat(n, body) => {
                // Loops nest, but their product stays small: the deadline is not the point.
                let count = if self.loops == 0 { n % 32 } else { n % 4 };
                self.loops += 1;
                let body = self.stmt(body, depth + 1);
                self.loops -= 1;
                format!("for _ = 1, {count} do {body} end")
            }
            Stmt::Spin => {
                if self.spin {
                    "while true do end".into()
                } else {
                    String::new()
                }
            }
        }
    }
}

struct Dirs {
    root: PathBuf,
    out: PathBuf,
}

fn dirs() -> &'static Dirs {
    static DIRS: OnceLock<Dirs> = OnceLock::new();
    DIRS.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("penumbra-fuzz-lua-{}", std::process::id()));
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub/dir")).expect("a temporary folder");
        let image =
            penumbra_core::msad4::Image::rgba8(3, 2, (0..24).map(|i| (i * 11) as u8).collect())
                .expect("an image");
        let png = penumbra_core::msad4::encode_png(&image).expect("a PNG");
        std::fs::write(root.join("in.png"), &png).expect("write in.png");
        std::fs::write(root.join("sub/dir/x.png"), &png[..png.len() / 2]).expect("write x.png");
        Dirs {
            root,
            out: base.join("out"),
        }
    })
}

fuzz_target!(|input: Input| {
    let mut w = Writer {
        out: String::from("local P = {}\n"),
        spin: input.spin_key == 0xA5,
        stmts: 0,
        loops: 0,
    };
    for s in input.stmts.iter().take(64) {
        let line = w.stmt(s, 0);
        w.out.push_str(&line);
        w.out.push('\n');
    }
    if std::env::var_os("PENUMBRA_FUZZ_PRINT").is_some() {
        eprintln!("--- script ---\n{}", w.out);
    }
    let dirs = dirs();
    let runtime = Runtime::new(
        RuntimeOptions::new(&dirs.root)
            .out_dir(&dirs.out)
            .max_memory(8 << 20)
            .timeout(Duration::from_millis(50)),
    )
    .expect("a runtime");
    let started = std::time::Instant::now();
    let result = runtime.run_str(&w.out, "fuzz");
    // The deadline holds inside every call a script can make. The release target is 100 ms past
    // it (tests/hostile.rs); this AddressSanitizer build runs several times slower, so it gets
    // more room before an input counts as a hang.
    assert!(
        started.elapsed() <= Duration::from_millis(50 + 400),
        "the run took {:?} under a 50 ms deadline\n--- script ---\n{}",
        started.elapsed(),
        w.out
    );
    if let Err(e) = result {
        let text = e.to_string();
        assert!(
            !text.contains("internal error"),
            "{text}\n--- script ---\n{}",
            w.out
        );
    }
});
