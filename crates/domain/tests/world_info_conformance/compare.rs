//! SillyTavern's expected output of one scan against recapd's outcome and
//! placement, written as a readable difference.

use std::fmt::Write as _;

use recapd_domain::settings::Role;
use recapd_domain::world_info::place::Placement;
use recapd_domain::world_info::scan::ScanOutcome;
use recapd_domain::world_info::types::Activated;
use serde_json::Value;

pub(crate) fn role_number(role: Role) -> i64 {
    match role {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
    }
}

/// The text of a JSON value as a list line.
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

pub(crate) fn short(s: &str) -> String {
    let mut t: String = s.chars().take(60).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    format!("{t:?}")
}

/// One activated entry as a comparable line.
pub(crate) fn activated_line(a: &Activated) -> String {
    format!(
        "{}.{} pos={} depth={} role={} order={} {}",
        a.book,
        a.uid,
        a.position
            .map_or("none".to_string(), |p| p.number().to_string()),
        a.depth.map_or("none".to_string(), |d| d.to_string()),
        role_number(a.role),
        a.order,
        short(&a.content)
    )
}

/// SillyTavern's activated entry in the same form. Its `position` is
/// placed only when a number 0-7 (a switch with `===`); a `role` missing
/// or null is system where it matters (placement); an `order` missing is
/// shown as recapd's, since it only sorts.
pub(crate) fn expected_activated_line(e: &Value, got_order: Option<f64>) -> String {
    let position = match e["position"].as_i64() {
        Some(n @ 0..=7) if e["position"].is_i64() || e["position"].is_u64() => n.to_string(),
        _ => "none".to_string(),
    };
    let depth = match e["depth"].as_u64() {
        Some(d) => d.to_string(),
        None => "none".to_string(),
    };
    let role = e["role"].as_i64().unwrap_or(0);
    let order = match e["order"].as_f64() {
        Some(o) => o.to_string(),
        None => got_order.map_or("undefined".to_string(), |o| o.to_string()),
    };
    format!(
        "{}.{} pos={} depth={} role={} order={} {}",
        e["world"].as_str().unwrap_or("?"),
        e["uid"].as_str().unwrap_or("?"),
        position,
        depth,
        role,
        order,
        short(e["content"].as_str().unwrap_or(""))
    )
}

/// Compares two lists of lines, writing a readable difference.
pub(crate) fn diff_lists(out: &mut String, what: &str, expected: &[String], got: &[String]) {
    if expected == got {
        return;
    }
    let _ = writeln!(out, "    {what}:");
    let _ = writeln!(out, "      SillyTavern ({}):", expected.len());
    for l in expected {
        let mark = if got.contains(l) { " " } else { "-" };
        let _ = writeln!(out, "       {mark} {l}");
    }
    let _ = writeln!(out, "      recapd ({}):", got.len());
    for l in got {
        let mark = if expected.contains(l) { " " } else { "+" };
        let _ = writeln!(out, "       {mark} {l}");
    }
}

pub(crate) fn diff_text(out: &mut String, what: &str, expected: &str, got: &str) {
    if expected != got {
        let _ = writeln!(
            out,
            "    {what}:\n      SillyTavern: {expected:?}\n      recapd:      {got:?}"
        );
    }
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Compares recapd's outcome and placement of one scan with SillyTavern's.
pub(crate) fn compare(
    out: &mut String,
    expected: &Value,
    outcome: &ScanOutcome,
    placement: &Placement,
) {
    let got: Vec<String> = outcome.activated.iter().map(activated_line).collect();
    let exp: Vec<String> = expected["activated"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    let got_order = outcome
                        .activated
                        .iter()
                        .find(|g| {
                            Some(g.book.as_str()) == e["world"].as_str()
                                && Some(g.uid.as_str()) == e["uid"].as_str()
                        })
                        .map(|g| g.order);
                    expected_activated_line(e, got_order)
                })
                .collect()
        })
        .unwrap_or_default();
    diff_lists(out, "activated (in order)", &exp, &got);
    // Contents in full: the lines above shorten them.
    for (e, g) in expected["activated"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(&outcome.activated)
    {
        let ec = e["content"].as_str().unwrap_or("");
        if e["uid"].as_str() == Some(g.uid.as_str()) && ec != g.content {
            diff_text(
                out,
                &format!("content of {}.{}", g.book, g.uid),
                ec,
                &g.content,
            );
        }
    }

    diff_text(
        out,
        "before",
        expected["world_info_before"].as_str().unwrap_or(""),
        &placement.before,
    );
    diff_text(
        out,
        "after",
        expected["world_info_after"].as_str().unwrap_or(""),
        &placement.after,
    );

    let exp_depth: Vec<String> = expected["depth_prompts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "depth={} role={} {}",
                show(&p["depth"]),
                show(&p["role"]),
                show(&p["text"])
            )
        })
        .collect();
    let got_depth: Vec<String> = placement
        .depth
        .iter()
        .map(|p| {
            format!(
                "depth={} role={} {:?}",
                p.depth,
                role_number(p.role),
                p.text
            )
        })
        .collect();
    diff_lists(
        out,
        "at-depth prompts (by depth, role)",
        &exp_depth,
        &got_depth,
    );

    diff_text(
        out,
        "AN top",
        &strings(&expected["an_top"]).join("\n"),
        &placement.an_top,
    );
    diff_text(
        out,
        "AN bottom",
        &strings(&expected["an_bottom"]).join("\n"),
        &placement.an_bottom,
    );
    diff_lists(
        out,
        "examples top",
        &strings(&expected["examples_top"]),
        &placement.examples_top,
    );
    diff_lists(
        out,
        "examples bottom",
        &strings(&expected["examples_bottom"]),
        &placement.examples_bottom,
    );

    let exp_outlets: Vec<String> = expected["outlets"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k:?} = {:?}", strings(v).join("\n")))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let got_outlets: Vec<String> = placement
        .outlets
        .iter()
        .map(|(k, v)| format!("{k:?} = {v:?}"))
        .collect();
    diff_lists(out, "outlets", &exp_outlets, &got_outlets);

    let got_timed: Value = serde_json::from_str(&outcome.timed.to_json()).unwrap_or(Value::Null);
    if got_timed != expected["timed"] {
        let _ = writeln!(
            out,
            "    timed state after:\n      SillyTavern: {}\n      recapd:      {}",
            expected["timed"], got_timed
        );
    }
}
