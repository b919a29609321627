//! The exposure and line-of-sight systems on task threads with a small stack (256 KiB). A game
//! that depends on bevy_penumbra builds it at Cargo's default `opt-level = 0`, where a batched
//! kernel once needed more than a Bevy task thread's whole stack; CI runs this test in that
//! profile (`cargo test --profile stack-check -p bevy_penumbra --test small_stack`).

mod support;

use bevy_penumbra::prelude::*;
use bevy_tasks::{ComputeTaskPool, TaskPoolBuilder};
use bevy_transform::prelude::*;
use glam::Vec3;
use support::*;

const STACK: usize = 256 << 10;

#[test]
fn the_exposure_system_runs_on_small_task_stacks() {
    // The plugin and `TaskPoolPlugin` take the pool that is already there.
    ComputeTaskPool::get_or_init(|| {
        TaskPoolBuilder::new()
            .num_threads(2)
            .stack_size(STACK)
            .thread_name("small-stack compute".into())
            .build()
    });
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(|| {
            let mut app = app();
            floor(&mut app);
            crate_box(&mut app, Vec3::new(0.0, 3.0, 0.0));
            app.world_mut().spawn((
                ShadowLight::directional(1.0)
                    .with_resolution(256)
                    .with_kernel(PcfKernel::PCF_3X3),
                Transform::default().looking_to(Vec3::new(0.3, -1.0, 0.2), Vec3::Y),
            ));
            app.world_mut().spawn((
                ShadowLight::point(9.0, 12.0)
                    .with_resolution(64)
                    .with_kernel(PcfKernel::PCF_5X5),
                Transform::from_xyz(-3.0, 2.5, 1.0),
            ));
            let probes: Vec<_> = (0..2000)
                .map(|i| {
                    let at = Vec3::new(
                        (i % 40) as f32 * 0.4 - 8.0,
                        0.5,
                        (i / 40) as f32 * 0.3 - 7.0,
                    );
                    probe(&mut app, at)
                })
                .collect();
            app.update();
            for p in probes {
                let exposure = app.world().get::<Exposure>(p).expect("an exposure");
                assert!((0.0..=10.0).contains(&exposure.total()), "{exposure:?}");
            }
        })
        .expect("a thread")
        .join()
        .expect("the systems run on a 256 KiB stack");
}
