use super::*;

#[test]
fn d16_texels_are_stored_in_two_bytes() {
    let desc = TextureDesc::new_2d(Format::D16Unorm, 3, 2);
    assert_eq!(desc.total_bytes(), 12);
    let t = Texture::new(desc, vec![0; 12]).unwrap();
    assert_eq!(t.subresource(0, 0).len(), 12);
}

#[test]
fn wrong_data_length_is_an_error() {
    let desc = TextureDesc::new_2d(Format::R32Float, 2, 2);
    assert!(matches!(
        Texture::new(desc, vec![0; 15]),
        Err(TextureError::DataLength {
            expected: 16,
            actual: 15,
            ..
        })
    ));
}

#[test]
fn zero_sizes_and_too_many_mips_are_errors() {
    assert!(
        TextureDesc::new_2d(Format::R8Unorm, 0, 4)
            .validate()
            .is_err()
    );
    assert!(
        TextureDesc::new_2d(Format::R8Unorm, 4, 4)
            .with_mip_levels(4)
            .validate()
            .is_err()
    );
    assert!(
        TextureDesc::new_2d(Format::R8Unorm, 4, 4)
            .with_mip_levels(3)
            .validate()
            .is_ok()
    );
    assert!(
        TextureDesc::new_2d(Format::R8Unorm, 16385, 1)
            .validate()
            .is_err()
    );
    let d3 = TextureDesc::new(Dimension::Texture3D, Format::R8Unorm, [2049, 1, 1], 1);
    assert!(d3.validate().is_err());
    let cube = TextureDesc::new(Dimension::TextureCube, Format::R8Unorm, [4, 4, 1], 5);
    assert!(cube.validate().is_err());
}

#[test]
fn huge_textures_are_refused_before_allocation() {
    let desc = TextureDesc::new(
        Dimension::Texture2DArray,
        Format::R32G32B32A32Float,
        [16384, 16384, 1],
        2048,
    );
    assert!(matches!(
        Texture::zeroed(desc),
        Err(TextureError::TooLarge { .. })
    ));
}

#[test]
fn subresources_follow_d3d12_order() {
    let desc = TextureDesc::new(Dimension::Texture2DArray, Format::R8Unorm, [2, 2, 1], 2)
        .with_mip_levels(2);
    let t = Texture::from_subresources(desc, &[&[1, 1, 1, 1], &[2], &[3, 3, 3, 3], &[4]]).unwrap();
    assert_eq!(t.subresource(1, 0), &[2]);
    assert_eq!(t.subresource(0, 1), &[3, 3, 3, 3]);
    assert_eq!(t.subresource(1, 1), &[4]);
}

#[test]
fn min_max_chains_are_conservative_for_odd_sizes() {
    let desc = TextureDesc::new_2d(Format::R32Float, 5, 1).with_mip_levels(3);
    let l0 = [0.5, 0.4, 0.3, 0.2, 0.1];
    let tmin = Texture::from_level0_f32(desc, &l0, MipFilter::Min).unwrap();
    let tmax = Texture::from_level0_f32(desc, &l0, MipFilter::Max).unwrap();
    assert_eq!(tmin.load(2, 0, [0, 0, 0])[0], 0.1);
    assert_eq!(tmax.load(2, 0, [0, 0, 0])[0], 0.5);
    let tavg = Texture::from_level0_f32(
        TextureDesc::new_2d(Format::R32Float, 2, 2).with_mip_levels(2),
        &[0.0, 1.0, 1.0, 0.0],
        MipFilter::Average,
    )
    .unwrap();
    assert_eq!(tavg.load(1, 0, [0, 0, 0])[0], 0.5);
}

#[test]
fn views_are_checked_against_the_resource() {
    let desc = TextureDesc::new(Dimension::Texture2DArray, Format::R8Unorm, [4, 4, 1], 3)
        .with_mip_levels(3);
    let t = Texture::zeroed(desc).unwrap();
    let v = t
        .with_view(TextureView {
            most_detailed_mip: 1,
            first_array_slice: 1,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(v.view().mip_count, 2);
    assert_eq!(v.view().element_count, 2);
    assert!(
        t.with_view(TextureView {
            most_detailed_mip: 3,
            ..Default::default()
        })
        .is_err()
    );
    assert!(
        t.with_view(TextureView {
            mip_levels: Some(4),
            ..Default::default()
        })
        .is_err()
    );
    assert!(
        t.with_view(TextureView {
            first_array_slice: 1,
            array_size: Some(3),
            ..Default::default()
        })
        .is_err()
    );
}
