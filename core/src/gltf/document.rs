//! The glTF file before its geometry: the GLB container's chunks, the JSON document model (the
//! parts that hold geometry), and the asset's version and required extensions.

use ::gltf::json;

use super::{GltfError, NAME_CHARS, Reader, unsupported};

/// The parts of a glTF document that hold geometry, in the gltf crate's types. Everything else
/// (materials, textures, animations, cameras, skins, extensions) is skipped unread, so a quirk of
/// those types cannot refuse a level.
#[derive(serde::Deserialize)]
pub(super) struct Document {
    pub(super) asset: json::Asset,
    #[serde(default)]
    pub(super) scene: Option<json::Index<json::Scene>>,
    #[serde(default)]
    pub(super) scenes: Vec<SceneDoc>,
    #[serde(default)]
    pub(super) nodes: Vec<json::Node>,
    #[serde(default)]
    pub(super) meshes: Vec<json::Mesh>,
    #[serde(default)]
    pub(super) accessors: Vec<json::Accessor>,
    #[serde(default, rename = "bufferViews")]
    pub(super) buffer_views: Vec<json::buffer::View>,
    #[serde(default)]
    pub(super) buffers: Vec<json::Buffer>,
    #[serde(default, rename = "extensionsRequired")]
    pub(super) extensions_required: Vec<String>,
}

/// A scene; `nodes` is optional in the spec (`json::Scene` requires it).
#[derive(serde::Deserialize)]
pub(super) struct SceneDoc {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) nodes: Vec<json::Index<json::Node>>,
}

/// The JSON chunk and the BIN chunk (if any) of a GLB.
pub(super) fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), GltfError> {
    let glb = |m: String| GltfError::Glb(m);
    let u32_at = |at: usize| -> u32 {
        u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
    };
    if bytes.len() >= 4 && &bytes[..4] != b"glTF" {
        return Err(glb(format!(
            "bad magic {:?}: a binary glTF starts with \"glTF\" and a JSON glTF with '{{'",
            String::from_utf8_lossy(&bytes[..4])
        )));
    }
    if bytes.len() < 12 {
        return Err(glb(format!(
            "truncated: the header needs 12 bytes, the file has {}",
            bytes.len()
        )));
    }
    let version = u32_at(4);
    if version != 2 {
        return Err(glb(format!(
            "version {version} in the header: only glTF 2 is read"
        )));
    }
    let declared = u32_at(8) as usize;
    if declared > bytes.len() {
        return Err(glb(format!(
            "truncated: the header declares {declared} bytes, the file has {}",
            bytes.len()
        )));
    }
    if declared < bytes.len() {
        return Err(glb(format!(
            "the header declares {declared} bytes, but the file has {} (trailing data)",
            bytes.len()
        )));
    }
    let mut at = 12;
    let mut json = None;
    let mut bin = None;
    let mut index = 0usize;
    while at < declared {
        if declared - at < 8 {
            return Err(glb(format!(
                "truncated: chunk {index} at byte {at} needs an 8-byte header, {} bytes remain",
                declared - at
            )));
        }
        let length = u32_at(at) as usize;
        let kind = &bytes[at + 4..at + 8];
        let start = at + 8;
        let remain = declared - start;
        let name = match kind {
            b"JSON" => "JSON".to_owned(),
            b"BIN\0" => "BIN".to_owned(),
            other => format!("{:?}", String::from_utf8_lossy(other)),
        };
        if length > remain {
            return Err(glb(format!(
                "chunk {index} ({name}) at byte {at}: its length {length} runs past the end of \
                 the file ({remain} bytes follow its header)"
            )));
        }
        let data = &bytes[start..start + length];
        match kind {
            b"JSON" if index == 0 => json = Some(data),
            b"JSON" => {
                return Err(glb(format!(
                    "chunk {index} at byte {at} is a second JSON chunk"
                )));
            }
            _ if index == 0 => {
                return Err(glb(format!(
                    "the first chunk must be JSON, it is {name} (at byte 12)"
                )));
            }
            b"BIN\0" if bin.is_none() => bin = Some(data),
            b"BIN\0" => {
                return Err(glb(format!(
                    "chunk {index} at byte {at} is a second BIN chunk"
                )));
            }
            // Chunks of unknown types are skipped, as the spec says.
            _ => {}
        }
        at = start + length;
        index += 1;
    }
    let json = json.ok_or_else(|| glb("no JSON chunk after the header".to_owned()))?;
    // The spec pads the JSON chunk with spaces; some writers use zeros.
    let end = json
        .iter()
        .rposition(|&b| b != 0 && b != b' ')
        .map_or(0, |p| p + 1);
    Ok((&json[..end], bin))
}

/// Extensions a file may require without changing the geometry this reader sees.
fn harmless_extension(name: &str) -> bool {
    name == "KHR_mesh_quantization"
        || name == "KHR_lights_punctual"
        || name == "MSFT_texture_dds"
        || name.starts_with("KHR_materials_")
        || name.starts_with("KHR_texture_")
        || name.starts_with("EXT_texture_")
}

impl Reader<'_, '_> {
    pub(super) fn check_asset(&self) -> Result<(), GltfError> {
        let asset = &self.root.asset;
        if !asset.version.starts_with("2.") && asset.version != "2" {
            return Err(unsupported(
                "asset",
                format!(
                    "version {:?}: only glTF 2.x is read",
                    asset.version.chars().take(NAME_CHARS).collect::<String>()
                ),
            ));
        }
        if let Some(min) = &asset.min_version
            && !(min.starts_with("2.0") || min == "2")
        {
            return Err(unsupported(
                "asset",
                format!(
                    "minVersion {:?}: only glTF 2.0 is read",
                    min.chars().take(NAME_CHARS).collect::<String>()
                ),
            ));
        }
        for (i, name) in self.root.extensions_required.iter().enumerate() {
            if !harmless_extension(name) {
                return Err(unsupported(
                    format!("extensionsRequired[{i}]"),
                    format!(
                        "{:?} is not supported (it changes or hides the geometry; supported: \
                         KHR_mesh_quantization and material, texture and light extensions)",
                        name.chars().take(NAME_CHARS).collect::<String>()
                    ),
                ));
            }
        }
        Ok(())
    }
}
