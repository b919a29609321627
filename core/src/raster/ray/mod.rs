//! Exact ray casts against triangle meshes and their instances: the nearest hit along a ray, and
//! whether a point lies inside a closed mesh.
//!
//! * **Triangle test**: the watertight test of Woop, Benthin and Wald, "Watertight Ray/Triangle
//!   Intersection", Journal of Computer Graphics Techniques 2(1), 2013
//!   (<https://jcgt.org/published/0002/01/05/>). The ray is moved to the origin and sheared so
//!   that it runs along +z; a triangle is then hit when the origin lies inside its 2D
//!   projection, decided by the signs of three edge functions. Each vertex's sheared
//!   coordinates depend on the vertex alone and an edge function of a shared edge is computed
//!   from the same two vertices in both triangles, so the two values are exact negations of
//!   each other: a ray through a shared edge or vertex of a closed mesh hits at least one of the
//!   triangles round it (points on an edge count as inside, and an edge function of exactly 0
//!   is recomputed in f64, where the products are exact). No face is culled.
//! * **Traversal**: the mesh's own hierarchy (object space, [`super::index`], built with the
//!   surface-area heuristic), walked in its 4-wide form ([`Quad`]: four child boxes in two
//!   cache lines, tested together with 4-wide arithmetic, which halves the chain of dependent
//!   loads of a binary walk), nearest child first, a box skipped once its entry lies beyond the
//!   best hit so far; the stack lives on the call stack. The box test is the slab test with the
//!   ray's reciprocal direction (clamped to ±`f32::MAX`, so no distance is NaN), made
//!   conservative twice over: the far distance is scaled by `1 + 2γ₃` (Ize, "Robust BVH Ray
//!   Traversal", JCGT 2(2), 2013), and each box is widened by the largest error the shear can
//!   make in a vertex's coordinates relative to the ray (a few ulps of the largest distance
//!   from the ray's origin to the mesh's bounds; Woop et al. widen boxes during traversal for
//!   the same reason), so that no box is skipped that holds a triangle the triangle test would
//!   hit.
//! * **Instances**: the world-space hierarchy over the instances ([`InstanceIndex`]), walked
//!   the same way. A ray is taken into each instance's object space with the inverse of its
//!   transform (computed when the index is built or updated, and kept with the instance's
//!   mesh in one cache line per instance, in the hierarchy's leaf order); the direction is not
//!   renormalized there, so a hit's `t` in object space is its world `t`. The shear constants
//!   and the reciprocal direction are computed once per ray and instance.
//!
//! Ties are broken the same way everywhere: among hits at the same distance, the smallest
//! instance index wins, then the smallest triangle index. The answer is therefore the
//! lexicographic minimum of `(t, instance, triangle)` over every triangle the triangle test hits,
//! whatever order the hierarchy visits them in (a brute-force loop over all triangles with
//! [`TriangleRay::intersect`] gives the same bits).
//!
//! Degenerate input never panics: a ray with a NaN or infinite origin or direction, or a zero
//! direction, hits nothing; an instance whose transform is not an invertible affine map (a
//! singular or non-finite matrix, or a projective one) is never hit; triangles with a non-finite
//! vertex are not in the hierarchy and are never hit.
//!
//! [`Quad`]: super::index::Quad
//! [`InstanceIndex`]: super::InstanceIndex

mod instance;
mod mesh;
mod order;
mod traversal;
mod triangle;

use glam::{Mat4, Vec3, Vec4};

pub(super) use instance::InstanceRays;
pub(super) use mesh::RayData;
pub(crate) use order::{SORT_FROM, coherent_order};
pub use triangle::TriangleRay;

/// What a ray cast found.
///
/// `Id` names what was hit: an [`OccluderId`](crate::shadow::OccluderId) from
/// [`Lighting::raycast`](crate::shadow::Lighting::raycast), the instance's position in its list
/// from [`InstanceIndex::raycast`](super::InstanceIndex::raycast).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit<Id = u32> {
    /// The hit point in world space: `origin + distance · direction / |direction|`.
    pub position: Vec3,
    /// The unit geometric normal of the hit triangle in world space (through the inverse
    /// transpose of the instance's transform), turned to face the ray's origin:
    /// `normal · direction ≤ 0`. Triangles are hit from both sides.
    pub normal: Vec3,
    /// World units from the origin to the hit, along the normalized direction.
    pub distance: f32,
    /// What was hit.
    pub occluder: Id,
    /// The triangle's index in its mesh (indices `3·triangle .. 3·triangle + 3`).
    pub triangle: u32,
}

impl<Id> RayHit<Id> {
    /// The same hit named by `f(occluder)`.
    #[must_use]
    pub fn map_id<J>(self, f: impl FnOnce(Id) -> J) -> RayHit<J> {
        RayHit {
            position: self.position,
            normal: self.normal,
            distance: self.distance,
            occluder: f(self.occluder),
            triangle: self.triangle,
        }
    }
}

/// `direction` scaled to unit length, as the casts use it (scaled by its largest component
/// first, so that huge and tiny vectors normalize too); `None` for a zero or non-finite vector.
#[must_use]
pub fn unit_direction(direction: Vec3) -> Option<Vec3> {
    if !direction.is_finite() {
        return None;
    }
    let largest = direction.abs().max_element();
    if largest == 0.0 {
        return None;
    }
    // A division (a subnormal `largest` has no finite reciprocal), then a multiplication.
    let d = direction / largest;
    let d = d * (1.0 / d.length());
    (d.is_finite() && d != Vec3::ZERO).then_some(d)
}

/// The world-to-object matrix that ray casts use for an instance placed by `transform`
/// (inverted in f64, then rounded to f32); `None` when `transform` is not finite, not affine
/// (its last row is not `(0, 0, 0, 1)`) or not invertible: rays never hit such an instance.
#[must_use]
pub fn ray_inverse(transform: &Mat4) -> Option<Mat4> {
    if !transform.is_finite() || transform.row(3) != Vec4::W {
        return None;
    }
    let m = transform.as_dmat4();
    let det = m.determinant();
    if !det.is_finite() || det == 0.0 {
        return None;
    }
    let inv = m.inverse().as_mat4();
    (inv.is_finite() && inv.determinant() != 0.0).then_some(inv)
}

#[cfg(test)]
mod tests;
