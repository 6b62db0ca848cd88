//! Streaming access to the violations inside a JSON document: descend a JSON
//! Pointer with serde visitors, skipping everything else unparsed, and hand
//! over one element of the target array at a time. Memory stays near the
//! size of one violation object instead of a tree of the whole output.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Calls `each` for every element of the array at `pointer` (or once for an
/// object there) of the one JSON value `reader` starts with. Returns whether
/// the pointer led anywhere. Reads nothing past the value's last byte when it
/// is an object or array, so the caller can read what follows it.
pub(crate) fn for_each_at<R, F>(reader: R, pointer: &str, mut each: F) -> Result<bool, String>
where
    R: std::io::Read,
    F: FnMut(Value) -> Result<(), String>,
{
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let mut found = false;
    let mut deserializer = serde_json::Deserializer::from_reader(reader);
    let walk = Walk {
        segments: &segments,
        each: &mut each,
        found: &mut found,
    };
    walk.deserialize(&mut deserializer)
        .map_err(|e| e.to_string())?;
    Ok(found)
}

struct Walk<'a, F> {
    segments: &'a [String],
    each: &'a mut F,
    found: &'a mut bool,
}

impl<'de, F> DeserializeSeed<'de> for Walk<'_, F>
where
    F: FnMut(Value) -> Result<(), String>,
{
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, F> Visitor<'de> for Walk<'_, F>
where
    F: FnMut(Value) -> Result<(), String>,
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((segment, rest)) = self.segments.split_first() else {
            // The target is one object: one violation.
            let object = Value::deserialize_map(map)?;
            *self.found = true;
            return (self.each)(object).map_err(de::Error::custom);
        };
        let mut walk = Some(Walk {
            segments: rest,
            each: self.each,
            found: self.found,
        });
        while let Some(key) = map.next_key::<String>()? {
            match (&key == segment, walk.take()) {
                (true, Some(inner)) => map.next_value_seed(inner)?,
                (_, unused) => {
                    walk = unused;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((segment, rest)) = self.segments.split_first() else {
            *self.found = true;
            while let Some(item) = seq.next_element::<Value>()? {
                (self.each)(item).map_err(de::Error::custom)?;
            }
            return Ok(());
        };
        let wanted = segment.parse::<usize>().ok();
        let mut index = 0;
        let mut walk = Some(Walk {
            segments: rest,
            each: self.each,
            found: self.found,
        });
        loop {
            let step = match (Some(index) == wanted, walk.take()) {
                (true, Some(inner)) => seq.next_element_seed(inner)?,
                (_, unused) => {
                    walk = unused;
                    seq.next_element::<IgnoredAny>()?.map(|_| ())
                }
            };
            if step.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar("a boolean")
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar("a number")
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar("a number")
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar("a number")
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar("a string")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar("null")
    }
}

impl<F> Walk<'_, F> {
    /// A scalar where the pointer still had segments: nothing is there. A
    /// scalar *at* the target is not a list of violations.
    fn scalar<E: de::Error>(self, kind: &str) -> Result<(), E> {
        if self.segments.is_empty() {
            Err(E::custom(format!(
                "the violations are {kind}, not an array of objects"
            )))
        } else {
            Ok(())
        }
    }
}

/// `Value` from a map the visitor already entered.
trait FromMap {
    fn deserialize_map<'de, A: MapAccess<'de>>(map: A) -> Result<Value, A::Error>;
}

impl FromMap for Value {
    fn deserialize_map<'de, A: MapAccess<'de>>(map: A) -> Result<Value, A::Error> {
        use serde::Deserialize;
        Value::deserialize(de::value::MapAccessDeserializer::new(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(json: &str, pointer: &str) -> Result<(bool, Vec<Value>), String> {
        let mut items = Vec::new();
        let found = for_each_at(json.as_bytes(), pointer, |v| {
            items.push(v);
            Ok(())
        })?;
        Ok((found, items))
    }

    #[test]
    fn root_array_nested_array_and_object() {
        assert_eq!(collect("[{\"a\":1},{\"a\":2}]", "").unwrap().1.len(), 2);
        let nested = r#"{"version":"x","diags":[{"a":1}],"summary":{"n":[1,2]}}"#;
        assert_eq!(
            collect(nested, "/diags").unwrap(),
            (true, vec![serde_json::json!({"a":1})])
        );
        assert_eq!(collect(nested, "/summary/n").unwrap().1.len(), 2);
        assert_eq!(collect(r#"{"one":{"a":1}}"#, "/one").unwrap().1.len(), 1);
        assert_eq!(
            collect(r#"[[{"a":0}],[{"a":1}]]"#, "/1").unwrap(),
            (true, vec![serde_json::json!({"a":1})])
        );
        assert_eq!(collect(r#"{"a/b":[{}]}"#, "/a~1b").unwrap().1.len(), 1);
    }

    #[test]
    fn missing_path_and_bad_documents() {
        assert_eq!(
            collect(r#"{"other":[]}"#, "/diags").unwrap(),
            (false, vec![])
        );
        assert!(collect("", "").is_err());
        assert!(collect("[1,", "").is_err());
        // A scalar where the violations should be: the error names it.
        for (value, kind) in [
            ("\"text\"", "a string"),
            ("true", "a boolean"),
            ("null", "null"),
            ("3", "a number"),
            ("-3", "a number"),
            ("1.5", "a number"),
        ] {
            let error = collect(&format!(r#"{{"diags":{value}}}"#), "/diags").unwrap_err();
            let expected = format!("the violations are {kind}, not an array of objects");
            assert!(error.contains(&expected), "{value}: {error}");
        }
        // A scalar on the way: nothing is there.
        assert_eq!(
            collect(r#"{"diags":3}"#, "/diags/items").unwrap(),
            (false, vec![])
        );
    }
}
