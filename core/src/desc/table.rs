//! A root signature's static samplers, checked as a set and looked up by binding (SPEC R119).

use std::collections::HashMap;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::enums::ShaderVisibility;
use super::error::TableError;
use super::sampler::{
    DRIVER_RESERVED_REGISTER_SPACE_START, MAX_LIVE_STATIC_SAMPLERS, StaticSamplerDesc,
};

/// The static samplers of one root signature, validated as a set (SPEC R119; DXC root-signature
/// validator, d3d12.h).
///
/// Entries are either all unnamed ([`new`](Self::new)) or all named
/// ([`from_named`](Self::from_named)); names are for messages and [`get`](Self::get) only.
///
/// In RON (and JSON) a table is a plain list of [`StaticSamplerDesc`]s, or the named form
///
/// ```ron
/// StaticSamplerTable(samplers: {
///     "shadow": (Filter: COMPARISON_MIN_MAG_LINEAR_MIP_POINT, AddressU: BORDER, ShaderRegister: 2, RegisterSpace: 3),
///     "linear": (Filter: MIN_MAG_MIP_LINEAR, ShaderVisibility: PIXEL),
/// })
/// ```
///
/// where the struct name is optional and the entries keep their order.
#[derive(Clone, Debug, PartialEq)]
pub struct StaticSamplerTable {
    entries: Vec<StaticSamplerDesc>,
    /// Empty, or one name per entry.
    names: Vec<String>,
}

impl StaticSamplerTable {
    /// Validates unnamed samplers as a root signature's static samplers.
    pub fn new(samplers: Vec<StaticSamplerDesc>) -> Result<Self, TableError> {
        Self::build(samplers, Vec::new())
    }

    /// Validates named samplers; names must be unique.
    pub fn from_named(samplers: Vec<(String, StaticSamplerDesc)>) -> Result<Self, TableError> {
        let (names, entries): (Vec<String>, Vec<StaticSamplerDesc>) = samplers.into_iter().unzip();
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(names.len());
        for (index, name) in names.iter().enumerate() {
            if let Some(&first) = seen.get(name.as_str()) {
                return Err(TableError::DuplicateName {
                    first,
                    second: index,
                    name: name.clone(),
                });
            }
            seen.insert(name, index);
        }
        Self::build(entries, names)
    }

    /// Parses a table from RON (a list, or the named form shown on [`StaticSamplerTable`]) and
    /// validates it. Syntax errors report `line:column`.
    #[cfg(feature = "ron")]
    pub fn from_ron(text: &str) -> Result<Self, TableError> {
        let repr: TableRepr = ron::from_str(text).map_err(|e| TableError::Ron(e.to_string()))?;
        repr.build()
    }

    /// The table as pretty RON, in the form [`from_ron`](Self::from_ron) reads.
    #[must_use]
    #[cfg(feature = "ron")]
    pub fn to_ron(&self) -> String {
        let config = ron::ser::PrettyConfig::new().struct_names(true);
        // Serializing plain data to a String cannot fail.
        ron::ser::to_string_pretty(self, config).unwrap_or_default()
    }

    fn build(entries: Vec<StaticSamplerDesc>, names: Vec<String>) -> Result<Self, TableError> {
        if entries.len() > MAX_LIVE_STATIC_SAMPLERS {
            return Err(TableError::TooMany {
                count: entries.len(),
            });
        }
        let table = Self { entries, names };
        let mut bindings: HashMap<(u32, u32), Vec<usize>> = HashMap::new();
        for (index, desc) in table.entries.iter().enumerate() {
            // R119: reserved spaces get their own error rather than the generic entry error.
            if desc.register_space >= DRIVER_RESERVED_REGISTER_SPACE_START {
                return Err(TableError::ReservedSpace {
                    index,
                    name: table.name_at(index),
                    space: desc.register_space,
                });
            }
            desc.validate().map_err(|error| TableError::Entry {
                index,
                name: table.name_at(index),
                error: Box::new(error),
            })?;
            let same_binding = bindings
                .entry((desc.register_space, desc.shader_register))
                .or_default();
            // R119: ALL overlaps every stage; two different single stages do not.
            if let Some(&first) = same_binding.iter().find(|&&other| {
                table.entries[other]
                    .shader_visibility
                    .overlaps(desc.shader_visibility)
            }) {
                let other = table.entries[first].shader_visibility;
                let visibility = if other == ShaderVisibility::All {
                    desc.shader_visibility
                } else {
                    other
                };
                return Err(TableError::Overlap {
                    first,
                    first_name: table.name_at(first),
                    second: index,
                    second_name: table.name_at(index),
                    register: desc.shader_register,
                    space: desc.register_space,
                    visibility,
                });
            }
            same_binding.push(index);
        }
        Ok(table)
    }

    fn name_at(&self, index: usize) -> Option<String> {
        self.names.get(index).cloned()
    }

    /// The sampler a shader of `stage` sees as `register(s{register}, space{space})`: the entry
    /// on that binding whose visibility is `ALL` or `stage` (R119).
    #[must_use]
    pub fn lookup(
        &self,
        space: u32,
        register: u32,
        stage: ShaderVisibility,
    ) -> Option<&StaticSamplerDesc> {
        self.entries.iter().find(|d| {
            d.register_space == space
                && d.shader_register == register
                && d.shader_visibility.is_visible_to(stage)
        })
    }

    /// The entry with this name.
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&StaticSamplerDesc> {
        let index = self.names.iter().position(|n| n == name)?;
        self.entries.get(index)
    }

    /// The entries in input order, with their names if the table is named.
    pub fn iter(&self) -> impl Iterator<Item = (Option<&str>, &StaticSamplerDesc)> {
        self.entries
            .iter()
            .enumerate()
            .map(|(index, desc)| (self.names.get(index).map(String::as_str), desc))
    }

    /// The number of entries.
    #[inline]
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no entries.
    #[inline]
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Named entries as a map that keeps their order.
struct NamedEntries<'a>(&'a StaticSamplerTable);

impl Serialize for NamedEntries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.names.iter().zip(&self.0.entries))
    }
}

impl Serialize for StaticSamplerTable {
    /// A list when unnamed, else `StaticSamplerTable(samplers: { name: desc, ... })`.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.names.is_empty() {
            serializer.collect_seq(&self.entries)
        } else {
            let mut table = serializer.serialize_struct("StaticSamplerTable", 1)?;
            table.serialize_field("samplers", &NamedEntries(self))?;
            table.end()
        }
    }
}

impl<'de> Deserialize<'de> for StaticSamplerTable {
    /// Either form of [`StaticSamplerTable`], validated; a validation failure becomes a
    /// deserialization error carrying the [`TableError`] text.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        TableRepr::deserialize(deserializer)?
            .build()
            .map_err(de::Error::custom)
    }
}

/// A parsed but unvalidated table.
enum TableRepr {
    List(Vec<StaticSamplerDesc>),
    Named(Vec<(String, StaticSamplerDesc)>),
}

impl TableRepr {
    fn build(self) -> Result<StaticSamplerTable, TableError> {
        match self {
            Self::List(list) => StaticSamplerTable::new(list),
            Self::Named(named) => StaticSamplerTable::from_named(named),
        }
    }
}

impl<'de> Deserialize<'de> for TableRepr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TableVisitor)
    }
}

/// Reads a list of samplers, or a struct/map whose one field `samplers` holds them.
struct TableVisitor;

impl<'de> Visitor<'de> for TableVisitor {
    type Value = TableRepr;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a list of static samplers or `(samplers: { \"name\": (...), ... })`")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TableRepr, A::Error> {
        EntriesVisitor.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TableRepr, A::Error> {
        let mut entries = None;
        while let Some(key) = map.next_key::<String>()? {
            if key != "samplers" {
                return Err(de::Error::unknown_field(&key, &["samplers"]));
            }
            if entries.is_some() {
                return Err(de::Error::duplicate_field("samplers"));
            }
            entries = Some(map.next_value::<Entries>()?.0);
        }
        entries.ok_or_else(|| de::Error::missing_field("samplers"))
    }
}

/// The value of `samplers`: an ordered map of named entries, or a list.
struct Entries(TableRepr);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EntriesVisitor).map(Entries)
    }
}

struct EntriesVisitor;

impl<'de> Visitor<'de> for EntriesVisitor {
    type Value = TableRepr;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a map from sampler names to static samplers, or a list of static samplers")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TableRepr, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(desc) = seq.next_element::<StaticSamplerDesc>()? {
            list.push(desc);
        }
        Ok(TableRepr::List(list))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TableRepr, A::Error> {
        let mut named = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(entry) = map.next_entry::<String, StaticSamplerDesc>()? {
            named.push(entry);
        }
        Ok(TableRepr::Named(named))
    }
}
