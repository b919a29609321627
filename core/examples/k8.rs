use penumbra_core::msad4::*;
fn main() {
    let size = 2048u32;
    let mut st = 0x2545_F491_4F6C_DD1Du64;
    let mut byte = || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        (st >> 24) as u8
    };
    let image = Image::r8(size, size, (0..size * size).map(|_| byte()).collect()).unwrap();
    let t: u32 = std::env::var("T")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let tpl = Image::r8(t, t, (0..t * t).map(|_| byte().max(1)).collect()).unwrap();
    let mut map = SadMap::default();
    let start = std::time::Instant::now();
    for _ in 0..200 {
        sad_map_into(&image, &tpl, 1, CpuExtension::Avx512bw, &mut map).unwrap();
    }
    let dt = start.elapsed().as_secs_f64() / 200.0;
    println!(
        "{:.1} G AD/s",
        f64::from((size - t + 1).pow(2)) * f64::from(t * t) / dt / 1e9
    );
}
