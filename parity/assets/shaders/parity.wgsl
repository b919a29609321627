// penumbra parity: writes, per pixel, the shadow factor bevy_pbr's own shadow functions compute
// (mode 0: factor and world position) or the normal they were given (mode 1: normal and a
// marker), for one light of the scene (kind 0 directional, 1 spot, 2 point).
#import bevy_pbr::{
    forward_io::VertexOutput,
    mesh_view_bindings as view_bindings,
    shadows,
}

struct Params {
    mode: u32,
    kind: u32,
    unused0: u32,
    unused1: u32,
}

@group(#{MATERIAL_BIND_GROUP}) @binding(0) var<uniform> params: Params;

@fragment
fn fragment(in: VertexOutput, @builtin(front_facing) is_front: bool) -> @location(0) vec4<f32> {
    // pbr_input_from_vertex_output: the normal the shadow functions receive is the
    // interpolated world normal, normalized.
    let normal = normalize(in.world_normal);
    if (params.mode == 1u) {
        return vec4<f32>(normal, 1.0e30);
    }
    let view = view_bindings::view;
    let view_z = dot(vec4<f32>(
        view.view_from_world[0].z,
        view.view_from_world[1].z,
        view.view_from_world[2].z,
        view.view_from_world[3].z
    ), in.world_position);
    var factor = 1.0;
    if (params.kind == 0u) {
        factor = shadows::fetch_directional_shadow(0u, in.world_position, normal, view_z, in.position.xy);
    } else if (params.kind == 1u) {
        let near_z = view_bindings::clustered_lights.data[0].shadow_map_near_z;
        factor = shadows::fetch_spot_shadow(0u, in.world_position, normal, near_z, in.position.xy);
    } else {
        factor = shadows::fetch_point_shadow(0u, in.world_position, normal, in.position.xy);
    }
    return vec4<f32>(factor, in.world_position.xyz);
}
