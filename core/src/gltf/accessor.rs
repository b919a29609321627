//! Accessors: their buffer views and strides checked against the buffers, sparse substitutions
//! applied, and the component types decoded into positions and indices.

use ::gltf::json;
use glam::Vec3;
use json::accessor::ComponentType;
use json::validation::Checked;

use super::{
    CHECK_EVERY, GltfError, Reader, check_deadline, count_of, invalid, label, unsupported,
};

/// An accessor's data in the buffers: where element 0 starts and the stride.
#[derive(Clone, Copy, Debug)]
struct Span {
    buffer: usize,
    start: usize,
    stride: usize,
}

/// A sparse accessor's substitutions.
#[derive(Clone, Copy, Debug)]
struct SparseSpan {
    count: usize,
    indices: Span,
    index_type: ComponentType,
    values: Span,
}

/// A validated accessor, ready to read.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    part: String,
    count: usize,
    component: ComponentType,
    dims: usize,
    normalized: bool,
    base: Option<Span>,
    sparse: Option<SparseSpan>,
}

impl Reader<'_, '_> {
    /// Checks that `count` elements of `elem` bytes, `stride` apart (the view's stride when
    /// `None`), from `offset` in buffer view `v`, lie inside the view and its buffer.
    fn span(
        &mut self,
        part: &str,
        v: usize,
        offset: u64,
        count: usize,
        elem: usize,
        stride: Option<usize>,
    ) -> Result<Span, GltfError> {
        let views = self.root.buffer_views.len();
        if v >= views {
            return Err(invalid(
                part,
                format!(
                    "buffer view {v} does not exist (the file has {})",
                    count_of(views, "buffer view", "buffer views")
                ),
            ));
        }
        let view = &self.root.buffer_views[v];
        let view_part = label("buffer view", v, view.name.as_deref());
        let b = view.buffer.value();
        let buffers = self.root.buffers.len();
        if b >= buffers {
            return Err(invalid(
                view_part,
                format!(
                    "buffer {b} does not exist (the file has {})",
                    count_of(buffers, "buffer", "buffers")
                ),
            ));
        }
        let view_start = view.byte_offset.map_or(0, |o| o.0);
        let view_len = view.byte_length.0;
        let stride = match stride {
            Some(s) => s,
            None => match view.byte_stride {
                Some(s) if s.0 < elem => {
                    return Err(invalid(
                        part,
                        format!(
                            "the byteStride {} of buffer view {v} is shorter than its \
                             {elem}-byte elements",
                            s.0
                        ),
                    ));
                }
                Some(s) => s.0,
                None => elem,
            },
        };
        self.load(b)?;
        let buffer_len = self.buffers[b].as_deref().map_or(0, <[u8]>::len) as u64;
        let view_end = view_start.checked_add(view_len);
        if view_end.is_none_or(|e| e > buffer_len) {
            return Err(invalid(
                view_part,
                format!(
                    "bytes {view_start}..+{view_len} are past the {buffer_len} bytes of buffer {b}"
                ),
            ));
        }
        let end = if count == 0 {
            Some(offset)
        } else {
            (count as u64 - 1)
                .checked_mul(stride as u64)
                .and_then(|x| x.checked_add(elem as u64))
                .and_then(|x| x.checked_add(offset))
        };
        if end.is_none_or(|e| e > view_len) {
            let end = end.map_or_else(|| "past 2^64".to_owned(), |e| e.to_string());
            return Err(invalid(
                part,
                format!(
                    "{} of {elem} bytes (stride {stride}) from byte {offset} end at byte \
                     {end}, past the {view_len} bytes of buffer view {v}",
                    count_of(count, "element", "elements")
                ),
            ));
        }
        // Inside a buffer that is in memory, so every offset fits a usize.
        Ok(Span {
            buffer: b,
            start: (view_start + offset) as usize,
            stride,
        })
    }

    /// Validates accessor `a` (in range: checked by the caller).
    pub(super) fn layout(&mut self, a: usize, part: String) -> Result<Layout, GltfError> {
        let accessor = &self.root.accessors[a];
        let Checked::Valid(json::accessor::GenericComponentType(component)) =
            &accessor.component_type
        else {
            return Err(invalid(part, "componentType is not one of 5120..5126"));
        };
        let Checked::Valid(kind) = &accessor.type_ else {
            return Err(invalid(part, "type is not SCALAR, VEC2..4 or MAT2..4"));
        };
        let (component, dims) = (*component, kind.multiplicity());
        // The counts were checked against the limits before: they fit in memory.
        let count = accessor.count.0 as usize;
        let normalized = accessor.normalized;
        let elem = component.size() * dims;
        let view = accessor.buffer_view.map(|v| v.value());
        let offset = accessor.byte_offset.map_or(0, |o| o.0);
        let sparse = accessor.sparse.as_ref().map(|s| {
            (
                s.count.0,
                s.indices.buffer_view.value(),
                s.indices.byte_offset.0,
                s.indices.component_type,
                s.values.buffer_view.value(),
                s.values.byte_offset.0,
            )
        });
        let base = match view {
            Some(v) => Some(self.span(&part, v, offset, count, elem, None)?),
            None => None,
        };
        let sparse = match sparse {
            None => None,
            Some((scount, iv, ioff, itype, vv, voff)) => {
                if scount > count as u64 {
                    return Err(invalid(
                        part,
                        format!("sparse count {scount} is more than its count {count}"),
                    ));
                }
                let scount = scount as usize;
                let index_type = match itype {
                    Checked::Valid(json::accessor::IndexComponentType(t))
                        if matches!(
                            t,
                            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
                        ) =>
                    {
                        t
                    }
                    _ => {
                        return Err(invalid(
                            part,
                            "sparse indices are not UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
                        ));
                    }
                };
                let isize = index_type.size();
                let indices = self.span(
                    &format!("{part} sparse indices"),
                    iv,
                    ioff,
                    scount,
                    isize,
                    Some(isize),
                )?;
                let values = self.span(
                    &format!("{part} sparse values"),
                    vv,
                    voff,
                    scount,
                    elem,
                    Some(elem),
                )?;
                Some(SparseSpan {
                    count: scount,
                    indices,
                    index_type,
                    values,
                })
            }
        };
        Ok(Layout {
            part,
            count,
            component,
            dims,
            normalized,
            base,
            sparse,
        })
    }

    fn bytes(&self, span: Span) -> &[u8] {
        self.buffers[span.buffer].as_deref().unwrap_or_default()
    }

    /// Reads every element of `layout` with `convert` (given an element's bytes), zeros where
    /// there is no buffer view, then applies its sparse substitutions.
    fn read_elements<T: Copy>(
        &self,
        layout: &Layout,
        zero: T,
        convert: impl Fn(&[u8]) -> T,
    ) -> Result<Vec<T>, GltfError> {
        let elem = layout.component.size() * layout.dims;
        let mut out = Vec::with_capacity(layout.count);
        match layout.base {
            Some(span) => {
                let data = self.bytes(span);
                for k in 0..layout.count {
                    if k % CHECK_EVERY == CHECK_EVERY - 1 {
                        check_deadline()?;
                    }
                    let at = span.start + k * span.stride;
                    out.push(convert(&data[at..at + elem]));
                }
            }
            None => out.resize(layout.count, zero),
        }
        if let Some(sparse) = layout.sparse {
            let indices = self.bytes(sparse.indices);
            let values = self.bytes(sparse.values);
            let isize = sparse.index_type.size();
            for k in 0..sparse.count {
                if k % CHECK_EVERY == CHECK_EVERY - 1 {
                    check_deadline()?;
                }
                let at = sparse.indices.start + k * isize;
                let target = component_u32(&indices[at..at + isize], sparse.index_type) as usize;
                if target >= layout.count {
                    return Err(invalid(
                        layout.part.clone(),
                        format!(
                            "sparse index {target} (entry {k}) is past its {}",
                            count_of(layout.count, "element", "elements")
                        ),
                    ));
                }
                let at = sparse.values.start + k * elem;
                out[target] = convert(&values[at..at + elem]);
            }
        }
        Ok(out)
    }

    pub(super) fn read_positions(&self, layout: &Layout) -> Result<Vec<Vec3>, GltfError> {
        if layout.dims != 3 {
            return Err(invalid(
                layout.part.clone(),
                format!("type has {} components, POSITION is a VEC3", layout.dims),
            ));
        }
        let c = layout.component;
        if c == ComponentType::U32 {
            return Err(unsupported(
                layout.part.clone(),
                "POSITION of UNSIGNED_INT (FLOAT, or BYTE/SHORT and their unsigned forms with \
                 KHR_mesh_quantization, are read)",
            ));
        }
        let size = c.size();
        let normalized = layout.normalized;
        let out = self.read_elements(layout, Vec3::ZERO, |b| {
            Vec3::new(
                component_f32(&b[..size], c, normalized),
                component_f32(&b[size..2 * size], c, normalized),
                component_f32(&b[2 * size..], c, normalized),
            )
        })?;
        if let Some(k) = out.iter().position(|p| !p.is_finite()) {
            return Err(invalid(
                layout.part.clone(),
                format!("position {k} is not finite: {}", out[k]),
            ));
        }
        Ok(out)
    }

    pub(super) fn read_indices(&self, layout: &Layout) -> Result<Vec<u32>, GltfError> {
        if layout.dims != 1 {
            return Err(invalid(
                layout.part.clone(),
                format!("type has {} components, indices are SCALAR", layout.dims),
            ));
        }
        let c = layout.component;
        if !matches!(
            c,
            ComponentType::U8 | ComponentType::U16 | ComponentType::U32
        ) {
            return Err(invalid(
                layout.part.clone(),
                format!(
                    "indices of {}: they are UNSIGNED_BYTE, UNSIGNED_SHORT or UNSIGNED_INT",
                    component_name(c)
                ),
            ));
        }
        self.read_elements(layout, 0, |b| component_u32(b, c))
    }
}

fn component_name(c: ComponentType) -> &'static str {
    match c {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

/// One component (`b` holds at least its bytes) as an unsigned integer.
fn component_u32(b: &[u8], c: ComponentType) -> u32 {
    match c {
        ComponentType::I8 | ComponentType::U8 => u32::from(b[0]),
        ComponentType::I16 | ComponentType::U16 => u32::from(u16::from_le_bytes([b[0], b[1]])),
        ComponentType::U32 | ComponentType::F32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
    }
}

/// One component as a float, decoded as glTF says for normalized integers.
fn component_f32(b: &[u8], c: ComponentType, normalized: bool) -> f32 {
    match c {
        ComponentType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        ComponentType::I8 => {
            let v = f32::from(b[0] as i8);
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        ComponentType::U8 => {
            let v = f32::from(b[0]);
            if normalized { v / 255.0 } else { v }
        }
        ComponentType::I16 => {
            let v = f32::from(i16::from_le_bytes([b[0], b[1]]));
            if normalized {
                (v / 32767.0).max(-1.0)
            } else {
                v
            }
        }
        ComponentType::U16 => {
            let v = f32::from(u16::from_le_bytes([b[0], b[1]]));
            if normalized { v / 65535.0 } else { v }
        }
        ComponentType::U32 => {
            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32;
            if normalized { v / u32::MAX as f32 } else { v }
        }
    }
}
