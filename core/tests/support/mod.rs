//! Shared by the core test files: lists of penumbra_core values that several of them iterate or
//! draw from. (Seeded generators and special f32 values are `penumbra_testkit`'s.)
#![allow(dead_code)] // each test file uses part of it

use penumbra_core::ComparisonFunc;

/// Every comparison function a comparison sampler may use (all but NONE), in D3D12 order.
pub const COMPARISON_FUNCS: [ComparisonFunc; 8] = [
    ComparisonFunc::Never,
    ComparisonFunc::Less,
    ComparisonFunc::Equal,
    ComparisonFunc::LessEqual,
    ComparisonFunc::Greater,
    ComparisonFunc::NotEqual,
    ComparisonFunc::GreaterEqual,
    ComparisonFunc::Always,
];
