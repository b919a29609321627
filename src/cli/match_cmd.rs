//! `penumbra match IMAGE TEMPLATE`: find a sprite, tile or UI element in an image by masked SAD
//! (HLSL `msad4` semantics, SPEC §4), comparing RGBA with the template's transparent pixels as
//! "don't care" by default — the Lua API's `findImage` default too.

use std::path::PathBuf;

use penumbra_core::msad4::{
    Channels, DecodeLimits, Masking, MatchError, MatchOptions, find_matches, load_png_within,
    sad_map_masked, write_heatmap_png,
};

use super::limits::{Timeout, parse_timeout};
use super::output::{Failure, print};

/// The most matches `--top` may ask for (as the Lua API's `findImage`).
pub const MAX_TOP: usize = 10_000;

/// Arguments of `penumbra match`.
#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    /// The image to search (PNG).
    pub image: PathBuf,
    /// The template to find (PNG). Its fully transparent pixels are "don't care" (see --mask).
    pub template: PathBuf,
    /// How many matches to report, 1 to 10000 (non-maximum suppression keeps them half a
    /// template apart).
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub top: usize,
    /// Report only matches whose SAD is at most N.
    #[arg(long, value_name = "N")]
    pub max_sad: Option<u64>,
    /// Also write the SAD map as a heat-map PNG (best match white).
    #[arg(long, value_name = "OUT.png")]
    pub heatmap: Option<PathBuf>,
    /// Print the matches as a JSON array instead of one `x= y= sad=` line each.
    #[arg(long)]
    pub json: bool,
    /// Threads to use.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Compare luma (one byte per pixel) instead of all four RGBA channels, the default.
    #[arg(long, conflicts_with = "rgba")]
    pub luma: bool,
    /// Compare all four RGBA channels (the default; kept for older scripts).
    #[arg(long, hide = true)]
    pub rgba: bool,
    /// What is "don't care" in the template. alpha: only pixels whose alpha is 0; every byte of
    /// an opaque pixel counts, black included (RGBA only). msad4: every 0 byte, as HLSL's msad4
    /// masks its reference — an opaque black outline then does not count. auto: alpha for RGBA,
    /// msad4 for --luma (a luma template has no alpha: its transparent pixels are made 0).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_masking)]
    pub mask: Masking,
    /// Time limit in seconds for the whole search ("inf" for none).
    #[arg(long, value_name = "S", default_value = "10", value_parser = parse_timeout)]
    pub timeout: Timeout,
    /// The most pixels (width × height) an input PNG may have; larger ones are refused before
    /// they are decoded.
    #[arg(long, value_name = "N", default_value_t = DecodeLimits::DEFAULT.max_pixels)]
    pub max_pixels: u64,
}

/// Runs the command; the error is one line for `main` to print.
pub fn run(args: &MatchArgs) -> Result<(), Failure> {
    let timeout = args.timeout;
    let line = |e: MatchError| match e {
        MatchError::Interrupted => timeout.exceeded(),
        other => other.to_string().replace('\n', " "),
    };
    if !(1..=MAX_TOP).contains(&args.top) {
        return Err(format!(
            "--top {}: expected a number of matches from 1 to {MAX_TOP}",
            args.top
        )
        .into());
    }
    let channels = if args.luma {
        Channels::R8
    } else {
        Channels::Rgba8
    };
    let limits = DecodeLimits {
        max_pixels: args.max_pixels,
        ..DecodeLimits::DEFAULT
    };
    let found = timeout.run(|| {
        let image = load_png_within(&args.image, channels, false, &limits)?;
        let template = load_png_within(&args.template, channels, true, &limits)?;
        let opts = MatchOptions {
            top_k: args.top,
            max_sad: args.max_sad,
            threads: args.threads.max(1),
            masking: args.mask,
            ..MatchOptions::default()
        };
        let matches = find_matches(&image, &template, &opts)?;
        if let Some(out) = &args.heatmap {
            let map = sad_map_masked(&image, &template, args.mask, opts.threads)?;
            write_heatmap_png(&map, out)?;
        }
        Ok(matches)
    });
    let matches = found.map_err(line)?;
    let mut text = String::new();
    if args.json {
        text = serde_json::to_string(&matches).map_err(|e| e.to_string())?;
        text.push('\n');
    } else {
        for m in &matches {
            text.push_str(&format!("x={} y={} sad={}\n", m.x, m.y, m.sad));
        }
    }
    print(&text)
}

/// `--mask`: "auto", "alpha" or "msad4".
fn parse_masking(text: &str) -> Result<Masking, String> {
    Masking::from_name(text).ok_or_else(|| format!("{text:?}: expected auto, alpha or msad4"))
}
