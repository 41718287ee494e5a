//! Serde plumbing shared by every wire type.
//!
//! KnightCode files are written by several generations of the TypeScript agent and, later, by
//! newer versions of this one. Two rules follow:
//!
//! * Unknown keys and unknown tagged variants must survive a read/write round trip, so every
//!   struct keeps an `extra` map and every tagged enum an `Unknown` variant.
//! * Output must be byte-compatible with `JSON.stringify`: keys in the TypeScript insertion
//!   order, optional keys omitted rather than `null`, and numbers formatted the way JavaScript
//!   formats them (`0`, not `0.0`; `0.000003`, not `3e-6`).
//!
//! serde's derive cannot do the first without `#[serde(flatten)]`, and flatten (like internally
//! tagged enums) buffers every value before deserializing it, which halves parse speed on large
//! session files. The `wire_struct!` and `wire_enum!` macros below generate streaming
//! implementations instead: a tagged enum reads its tag (normally the first key) and hands the
//! same map over to the variant's struct without buffering.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;
use serde::de;

/// A JSON object with its keys in their original order.
pub type Object = serde_json::Map<String, serde_json::Value>;

/// Keys a struct does not know, kept in their original order. Almost always empty, so it
/// costs one pointer until a newer writer's key shows up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra(Option<Box<Object>>);

impl Extra {
    pub fn new() -> Self {
        Self(None)
    }

    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|map| map.is_empty())
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.0.as_ref()?.get(key)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn insert(&mut self, key: String, value: serde_json::Value) -> Option<serde_json::Value> {
        self.0
            .get_or_insert_with(Default::default)
            .insert(key, value)
    }

    /// Removes a key, keeping the order of the others.
    pub fn shift_remove(&mut self, key: &str) -> Option<serde_json::Value> {
        self.0.as_mut()?.shift_remove(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &serde_json::Value)> {
        self.0.iter().flat_map(|map| map.iter())
    }
}

impl std::ops::Index<&str> for Extra {
    type Output = serde_json::Value;
    fn index(&self, key: &str) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

/// A map key that borrows from the input when it can.
pub(crate) struct FieldKey<'de>(pub(crate) Cow<'de, str>);

impl FieldKey<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl<'de> Deserialize<'de> for FieldKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> de::Visitor<'de> for KeyVisitor {
            type Value = FieldKey<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(FieldKey(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(FieldKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(FieldKey(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The value of a tag key: almost always a string, borrowed from the input when possible so
/// that reading a tag allocates nothing.
pub enum TagValue<'de> {
    Str(Cow<'de, str>),
    Other(serde_json::Value),
}

impl<'de> Deserialize<'de> for TagValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TagVisitor;
        impl<'de> de::Visitor<'de> for TagVisitor {
            type Value = TagValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tag value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(TagValue::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TagValue::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(TagValue::Str(Cow::Owned(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
                Ok(TagValue::Other(v.into()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(TagValue::Other(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(TagValue::Other(v.into()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Ok(TagValue::Other(v.into()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(TagValue::Other(serde_json::Value::Null))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
                    .map(TagValue::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(TagValue::Other)
            }
        }
        deserializer.deserialize_any(TagVisitor)
    }
}

impl TagValue<'_> {
    pub fn into_value(self) -> serde_json::Value {
        match self {
            Self::Str(text) => serde_json::Value::String(text.into_owned()),
            Self::Other(value) => value,
        }
    }
}

/// A JavaScript number: serialized exactly as `JSON.stringify` would print it.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
pub struct JsNumber(pub f64);

impl JsNumber {
    pub fn get(self) -> f64 {
        self.0
    }
}

impl From<f64> for JsNumber {
    fn from(value: f64) -> Self {
        Self(value)
    }
}

impl From<JsNumber> for serde_json::Value {
    /// For details built as `serde_json::Value` trees: whole numbers become JSON integers so
    /// they print as `100`, not `100.0`, as the serializer above writes them.
    fn from(number: JsNumber) -> Self {
        let value = number.0;
        if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
            serde_json::Value::from(value as i64)
        } else {
            serde_json::Value::from(value)
        }
    }
}

/// Largest integer a JavaScript number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Formats a float as JavaScript's `Number.prototype.toString` does.
pub fn format_js_number(value: f64) -> String {
    if !value.is_finite() {
        // JSON.stringify writes NaN and Infinity as null.
        return "null".to_owned();
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // `-0` prints as `0` in JSON.stringify.
        return format!("{}", value as i64);
    }
    let mut buffer = ryu_js::Buffer::new();
    buffer.format(value).to_owned()
}

impl Serialize for JsNumber {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let value = self.0;
        if !value.is_finite() {
            return serializer.serialize_unit();
        }
        if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
            return serializer.serialize_i64(value as i64);
        }
        let text = format_js_number(value);
        match serde_json::value::RawValue::from_string(text) {
            Ok(raw) => raw.serialize(serializer),
            Err(_) => serializer.serialize_f64(value),
        }
    }
}

impl<'de> Deserialize<'de> for JsNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `null` reads as 0 so that a NaN written by JSON.stringify does not poison a session.
        lenient_f64(deserializer).map(Self)
    }
}

/// Reads any JSON number (or `null`, as 0) as f64 without going through `Option`, which costs
/// an extra dispatch per number on hot paths (every usage block has nine).
struct LenientNumber;

impl de::Visitor<'_> for LenientNumber {
    type Value = f64;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
        Ok(v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
        Ok(v)
    }
    fn visit_unit<E: de::Error>(self) -> Result<f64, E> {
        Ok(0.0)
    }
    fn visit_none<E: de::Error>(self) -> Result<f64, E> {
        Ok(0.0)
    }
}

fn lenient_f64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    deserializer.deserialize_any(LenientNumber)
}

/// Deserializes an integer that a JavaScript writer may have stored as a float or `null`.
pub(crate) fn lenient_u64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let value = lenient_f64(deserializer)?;
    if value.is_finite() && value > 0.0 {
        Ok(value as u64)
    } else {
        Ok(0)
    }
}

/// Deserializes a millisecond timestamp that may be a float or `null`.
pub(crate) fn lenient_i64<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let value = lenient_f64(deserializer)?;
    if value.is_finite() {
        Ok(value as i64)
    } else {
        Ok(0)
    }
}

/// Millisecond timestamp (`Date.now()`), tolerant of floats on input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub i64);

impl Serialize for Millis {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        lenient_i64(deserializer).map(Millis)
    }
}

/// Token count, tolerant of floats on input.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tokens(pub u64);

impl Serialize for Tokens {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        lenient_u64(deserializer).map(Tokens)
    }
}

/// An object with a streaming reader and a field writer; implemented by `wire_struct!` types
/// so that a tagged enum can hand over a half-read map without buffering it.
pub trait WireObject: Sized {
    /// Reads the remaining keys of a map.
    fn from_map<'de, A: de::MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    /// Writes the object's keys into an open map.
    fn serialize_fields<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error>;
}

impl<T: WireObject> WireObject for Box<T> {
    fn from_map<'de, A: de::MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::from_map(map).map(Box::new)
    }
    fn serialize_fields<M: serde::ser::SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        (**self).serialize_fields(map)
    }
}

/// A value a wire object carries in memory only (see `wire_struct!`'s `memory` section): it is
/// not serialized, reads back as `None`, and does not take part in equality, so an object
/// read from a file equals the one that was written.
#[derive(Debug, Clone, Copy)]
pub struct MemoryOnly<T>(pub Option<T>);

impl<T> Default for MemoryOnly<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> PartialEq for MemoryOnly<T> {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl<T> MemoryOnly<T> {
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// Serializes one field of a `wire_struct!`: `req` fields always, `opt` fields only when set.
#[doc(hidden)]
#[macro_export]
macro_rules! __wire_ser_field {
    (req, $map:ident, $json:literal, $value:expr) => {
        ::serde::ser::SerializeMap::serialize_entry($map, $json, &$value)?;
    };
    (opt, $map:ident, $json:literal, $value:expr) => {
        if let Some(value) = &$value {
            ::serde::ser::SerializeMap::serialize_entry($map, $json, value)?;
        }
    };
}

/// Declares a wire struct: fields in TypeScript insertion order, each `req` (always written;
/// missing on input reads as the type's default) or `opt` (an `Option`, omitted when `None`),
/// plus an `extra` map that carries unknown keys through a round trip. An optional
/// `; memory { name: Type }` section after the fields declares fields that exist only in
/// memory: never serialized, `Default` when read (wrap them in [`MemoryOnly`]).
#[macro_export]
macro_rules! wire_struct {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$fmeta:meta])* $mode:ident $json:literal $field:ident : $ty:ty ),* $(,)?
            $( ; memory { $( $(#[$mmeta:meta])* $mfield:ident : $mty:ty ),* $(,)? } )?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
            // Fields after `memory`: what the process knows about the object beyond its wire
            // form; never written, default when read (see `MemoryOnly`).
            $( $( $(#[$mmeta])* pub $mfield: $mty, )* )?
            /// Keys this version does not know; written back after the known ones.
            pub extra: $crate::wire::Extra,
        }

        impl $crate::wire::WireObject for $name {
            fn serialize_fields<M: ::serde::ser::SerializeMap>(
                &self,
                map: &mut M,
            ) -> ::std::result::Result<(), M::Error> {
                $( $crate::__wire_ser_field!($mode, map, $json, self.$field); )*
                for (key, value) in self.extra.iter() {
                    ::serde::ser::SerializeMap::serialize_entry(map, key, value)?;
                }
                Ok(())
            }

            fn from_map<'de, A: ::serde::de::MapAccess<'de>>(
                mut map: A,
            ) -> ::std::result::Result<Self, A::Error> {
                $( let mut $field: ::std::option::Option<$ty> = None; )*
                let mut extra = $crate::wire::Extra::new();
                while let Some(key) = map.next_key::<$crate::wire::FieldKey<'de>>()? {
                    match key.as_str() {
                        $( $json => { $field = Some(map.next_value()?); } )*
                        _ => {
                            let value = map.next_value::<::serde_json::Value>()?;
                            extra.insert(key.into_owned(), value);
                        }
                    }
                }
                Ok(Self {
                    $( $field: $field.unwrap_or_default(), )*
                    $( $( $mfield: ::std::default::Default::default(), )* )?
                    extra,
                })
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                $crate::wire::WireObject::serialize_fields(self, &mut map)?;
                ::serde::ser::SerializeMap::end(map)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct StructVisitor;
                impl<'de> ::serde::de::Visitor<'de> for StructVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        map: A,
                    ) -> ::std::result::Result<Self::Value, A::Error> {
                        <$name as $crate::wire::WireObject>::from_map(map)
                    }
                }
                deserializer.deserialize_map(StructVisitor)
            }
        }
    };
}

/// Declares an enum tagged by one key (`type`, `role`), whose variants are `wire_struct!`s.
/// Unknown tags (or a missing tag) become `Unknown` holding the whole object, so nothing a
/// newer writer stored is lost.
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident tag $tag:literal {
            $( $(#[$vmeta:meta])* $json:literal => $variant:ident($inner:ty) ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vmeta])* $variant($inner), )*
            /// A variant this version does not know, kept whole (tag included). Boxed: rare,
            /// and a JSON map is large.
            Unknown(Box<$crate::wire::Object>),
        }

        impl ::std::default::Default for $name {
            /// An empty unknown object: what a record missing this field reads as.
            fn default() -> Self {
                Self::Unknown(Box::default())
            }
        }

        impl $name {
            /// The tag value as written on the wire.
            pub fn tag(&self) -> &str {
                match self {
                    $( Self::$variant(_) => $json, )*
                    Self::Unknown(map) => map.get($tag).and_then(|v| v.as_str()).unwrap_or(""),
                }
            }

            fn from_tagged_rest<'de, A: ::serde::de::MapAccess<'de>>(
                tag: &str,
                map: A,
            ) -> ::std::result::Result<Self, A::Error> {
                match tag {
                    $( $json => Ok(Self::$variant(<$inner as $crate::wire::WireObject>::from_map(map)?)), )*
                    other => {
                        let mut all = $crate::wire::Object::new();
                        all.insert($tag.to_owned(), ::serde_json::Value::String(other.to_owned()));
                        let mut map = map;
                        while let Some(key) = map.next_key::<String>()? {
                            let value = map.next_value::<::serde_json::Value>()?;
                            all.insert(key, value);
                        }
                        Ok(Self::Unknown(Box::new(all)))
                    }
                }
            }

            /// Slow path: the tag was not the first key, so the object has been buffered.
            fn from_buffered(mut all: $crate::wire::Object) -> ::std::result::Result<Self, ::serde_json::Error> {
                let tag = match all.get($tag) {
                    Some(::serde_json::Value::String(tag)) => tag.clone(),
                    _ => return Ok(Self::Unknown(Box::new(all))),
                };
                match tag.as_str() {
                    $( $json => {
                        all.shift_remove($tag);
                        let inner: $inner = ::serde::Deserialize::deserialize(
                            ::serde_json::Value::Object(all),
                        )?;
                        Ok(Self::$variant(inner))
                    } )*
                    _ => Ok(Self::Unknown(Box::new(all))),
                }
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                serializer: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                use ::serde::ser::SerializeMap;
                match self {
                    $( Self::$variant(inner) => {
                        let mut map = serializer.serialize_map(None)?;
                        map.serialize_entry($tag, $json)?;
                        $crate::wire::WireObject::serialize_fields(inner, &mut map)?;
                        map.end()
                    } )*
                    Self::Unknown(all) => all.serialize(serializer),
                }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                struct EnumVisitor;
                impl<'de> ::serde::de::Visitor<'de> for EnumVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                        f.write_str(concat!("a ", stringify!($name), " object with a \"", $tag, "\" key"))
                    }
                    fn visit_map<A: ::serde::de::MapAccess<'de>>(
                        self,
                        mut map: A,
                    ) -> ::std::result::Result<Self::Value, A::Error> {
                        let Some(first) = map.next_key::<$crate::wire::FieldKey<'de>>()? else {
                            return Ok($name::Unknown(Box::default()));
                        };
                        if first.as_str() == $tag {
                            let tag = match map.next_value::<$crate::wire::TagValue<'de>>()? {
                                $crate::wire::TagValue::Str(tag) => {
                                    return $name::from_tagged_rest(&tag, map);
                                }
                                other => other.into_value(),
                            };
                            let mut all = $crate::wire::Object::new();
                            all.insert($tag.to_owned(), tag);
                            while let Some(key) = map.next_key::<String>()? {
                                let value = map.next_value::<::serde_json::Value>()?;
                                all.insert(key, value);
                            }
                            return Ok($name::Unknown(Box::new(all)));
                        }
                        let mut all = $crate::wire::Object::new();
                        let value = map.next_value::<::serde_json::Value>()?;
                        all.insert(first.into_owned(), value);
                        while let Some(key) = map.next_key::<String>()? {
                            let value = map.next_value::<::serde_json::Value>()?;
                            all.insert(key, value);
                        }
                        $name::from_buffered(all).map_err(::serde::de::Error::custom)
                    }
                }
                deserializer.deserialize_map(EnumVisitor)
            }
        }
    };
}

/// Serializes `value` as one compact JSON line without the trailing newline.
pub fn to_json_line<T: Serialize>(value: &T) -> Result<String, serde_json::Error> {
    serde_json::to_string(value)
}
