//! `penumbra match IMAGE TEMPLATE`: find a sprite, tile or UI element in an image by masked SAD
//! (HLSL `msad4` semantics, SPEC §4).

use std::path::PathBuf;

use penumbra_core::msad4::{
    Channels, MatchOptions, find_matches, load_png, load_png_template, sad_map, write_heatmap_png,
};

/// Arguments of `penumbra match`.
#[derive(clap::Args, Debug)]
pub struct MatchArgs {
    /// The image to search (PNG).
    pub image: PathBuf,
    /// The template to find (PNG). Fully transparent pixels and 0 bytes are "don't care".
    pub template: PathBuf,
    /// How many matches to report (non-maximum suppression keeps them half a template apart).
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
    /// Compare all four RGBA channels instead of luma.
    #[arg(long)]
    pub rgba: bool,
}

/// Runs the command; the error is one line for `main` to print.
pub fn run(args: &MatchArgs) -> Result<(), String> {
    let line = |e: penumbra_core::msad4::MatchError| e.to_string().replace('\n', " ");
    let channels = if args.rgba {
        Channels::Rgba8
    } else {
        Channels::R8
    };
    let image = load_png(&args.image, channels).map_err(line)?;
    let template = load_png_template(&args.template, channels).map_err(line)?;
    let opts = MatchOptions {
        top_k: args.top,
        max_sad: args.max_sad,
        threads: args.threads.max(1),
        ..MatchOptions::default()
    };
    let matches = find_matches(&image, &template, &opts).map_err(line)?;
    if let Some(out) = &args.heatmap {
        let map = sad_map(&image, &template, opts.threads).map_err(line)?;
        write_heatmap_png(&map, out).map_err(line)?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&matches).map_err(|e| e.to_string())?
        );
    } else {
        for m in &matches {
            println!("x={} y={} sad={}", m.x, m.y, m.sad);
        }
    }
    Ok(())
}
