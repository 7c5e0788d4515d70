//! A JSON value as JavaScript holds it after `JSON.parse`: numbers are
//! doubles, objects keep their members in JavaScript's property order (a
//! repeated member keeps its first place and its last value), and the value
//! can be written back exactly as `JSON.stringify` writes it. The entry
//! reader needs all three: JavaScript truthiness for the scanner's checks,
//! and SillyTavern's hash of the entry's `JSON.stringify` text.

use std::fmt::Write as _;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One JSON value with JavaScript's reading of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Js {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// Any number, as the double JavaScript parses it to.
    Num(f64),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<Js>),
    /// An object, members in the order they were first written.
    Obj(Vec<(String, Js)>),
}

impl Js {
    /// Parses JSON text; `None` when it is not JSON (or holds a number
    /// JavaScript would read as infinite, which serde refuses).
    pub(crate) fn parse(text: &str) -> Option<Js> {
        serde_json::from_str(text).ok()
    }

    /// The member `name` of an object; `None` when absent or not an object.
    pub(crate) fn get(&self, name: &str) -> Option<&Js> {
        match self {
            Js::Obj(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// JavaScript truthiness (`!!value`).
    pub(crate) fn truthy(&self) -> bool {
        match self {
            Js::Null => false,
            Js::Bool(b) => *b,
            Js::Num(n) => *n != 0.0 && !n.is_nan(),
            Js::Str(s) => !s.is_empty(),
            Js::Arr(_) | Js::Obj(_) => true,
        }
    }

    /// JavaScript's `Number(value)` for the primitives; arrays and objects
    /// give NaN (their string forms are rarely numbers).
    pub(crate) fn to_number(&self) -> f64 {
        match self {
            Js::Null => 0.0,
            Js::Bool(b) => f64::from(u8::from(*b)),
            Js::Num(n) => *n,
            Js::Str(s) => string_to_number(s),
            Js::Arr(_) | Js::Obj(_) => f64::NAN,
        }
    }

    /// JavaScript's `String(value)`; `None` is `undefined`.
    pub(crate) fn string_of(value: Option<&Js>) -> String {
        match value {
            None => "undefined".to_string(),
            Some(Js::Null) => "null".to_string(),
            Some(Js::Bool(b)) => b.to_string(),
            Some(Js::Num(n)) if n.is_nan() => "NaN".to_string(),
            Some(Js::Num(n)) if n.is_infinite() => {
                if *n > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
            }
            Some(Js::Num(n)) => number_to_string(*n),
            Some(Js::Str(s)) => s.clone(),
            // `[1, [2]]` is "1,2"; null and undefined items are empty.
            Some(Js::Arr(items)) => items
                .iter()
                .map(|item| match item {
                    Js::Null => String::new(),
                    other => Js::string_of(Some(other)),
                })
                .collect::<Vec<_>>()
                .join(","),
            Some(Js::Obj(_)) => "[object Object]".to_string(),
        }
    }

    /// `JSON.stringify(value)`.
    pub(crate) fn stringify(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Js::Null => out.push_str("null"),
            Js::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Js::Num(n) => {
                if n.is_finite() {
                    out.push_str(&number_to_string(*n));
                } else {
                    out.push_str("null");
                }
            }
            Js::Str(s) => write_json_string(s, out),
            Js::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Js::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in property_order(members).into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(k, out);
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// JavaScript's own-property order: integer-index keys ascending, then the
/// other keys in the order they were created.
fn property_order(members: &[(String, Js)]) -> Vec<(&String, &Js)> {
    let mut indexed: Vec<(u32, &String, &Js)> = Vec::new();
    let mut named: Vec<(&String, &Js)> = Vec::new();
    for (k, v) in members {
        match array_index(k) {
            Some(i) => indexed.push((i, k, v)),
            None => named.push((k, v)),
        }
    }
    indexed.sort_by_key(|(i, _, _)| *i);
    indexed
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .chain(named)
        .collect()
}

/// Named members in JavaScript's property order (integer-index names
/// ascending first, then the rest in insertion order).
pub(crate) fn in_property_order<K: AsRef<str>, T>(members: Vec<(K, T)>) -> Vec<(K, T)> {
    let mut indexed: Vec<(u32, (K, T))> = Vec::new();
    let mut named: Vec<(K, T)> = Vec::new();
    for m in members {
        match array_index(m.0.as_ref()) {
            Some(i) => indexed.push((i, m)),
            None => named.push(m),
        }
    }
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, m)| m).chain(named).collect()
}

/// The key as an array index (a canonical decimal below 2^32 - 1).
pub(crate) fn array_index(key: &str) -> Option<u32> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|i| *i != u32::MAX)
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JavaScript's white space and line terminators (`\s`, what `trim` strips).
pub(crate) fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `Number(string)`: blank is 0, decimal or 0x/0o/0b literals, else NaN.
fn string_to_number(s: &str) -> f64 {
    let t = s.trim_matches(is_js_space);
    if t.is_empty() {
        return 0.0;
    }
    let radix = |p: &str, r: u32| u64::from_str_radix(p, r).map_or(f64::NAN, |v| v as f64);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return radix(h, 16);
    }
    if let Some(o) = t.strip_prefix("0o").or_else(|| t.strip_prefix("0O")) {
        return radix(o, 8);
    }
    if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        return radix(b, 2);
    }
    let body = t.trim_start_matches(['+', '-']);
    match body {
        "Infinity" => {
            return if t.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            };
        }
        // Rust accepts these spellings; JavaScript does not.
        _ if body.eq_ignore_ascii_case("inf")
            || body.eq_ignore_ascii_case("infinity")
            || body.eq_ignore_ascii_case("nan") =>
        {
            return f64::NAN;
        }
        _ => {}
    }
    if t.len() - body.len() > 1 {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// JavaScript's `Number.prototype.toString()` for a finite double.
pub(crate) fn number_to_string(n: f64) -> String {
    if n == 0.0 {
        return "0".to_string();
    }
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return format!("{}", n as i128);
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, as
    // JavaScript does; only the layout differs.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let e: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let point = e + 1; // JavaScript's n: the decimal point's place.
    let sign = if n < 0.0 { "-" } else { "" };
    let body = if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        let (a, b) = digits.split_at(point as usize);
        format!("{a}.{b}")
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let exp_sign = if point > 0 { "+" } else { "-" };
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        format!("{first}{frac}e{exp_sign}{}", (point - 1).abs())
    };
    format!("{sign}{body}")
}

/// SillyTavern's `getStringHash` (utils.js:522-539, a cyrb53 hash over the
/// UTF-16 code units, seed 0): a non-negative integer below 2^53.
pub(crate) fn string_hash(s: &str) -> u64 {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in s.encode_utf16() {
        let ch = u32::from(unit);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    4_294_967_296 * u64::from(2_097_151 & h2) + u64::from(h1)
}

impl<'de> Deserialize<'de> for Js {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Js, D::Error> {
        deserializer.deserialize_any(JsVisitor)
    }
}

struct JsVisitor;

impl<'de> Visitor<'de> for JsVisitor {
    type Value = Js;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Js, E> {
        Ok(Js::Null)
    }
    fn visit_none<E>(self) -> Result<Js, E> {
        Ok(Js::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Js, E> {
        Ok(Js::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Js, E> {
        Ok(Js::Num(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Js, E> {
        Ok(Js::Num(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Js, E> {
        Ok(Js::Num(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Js, E> {
        Ok(Js::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Js, E> {
        Ok(Js::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Js, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Js>()? {
            items.push(item);
        }
        Ok(Js::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Js, A::Error> {
        let mut members: Vec<(String, Js)> = Vec::new();
        let mut places: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        while let Some((k, v)) = map.next_entry::<String, Js>()? {
            // JSON.parse: a repeated member keeps its first place, last value.
            match places.get(&k) {
                Some(&i) => members[i].1 = v,
                None => {
                    places.insert(k.clone(), members.len());
                    members.push((k, v));
                }
            }
        }
        Ok(Js::Obj(members))
    }
}
