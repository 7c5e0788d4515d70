use super::*;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn vectors_are_unit_deterministic_and_closer_for_shared_words() {
    let a = vector("The lantern by the harbour gate", 384);
    assert_eq!(a, vector("the LANTERN, by the harbour gate!", 384));
    assert_eq!(a.len(), 384);
    assert!((cosine(&a, &a) - 1.0).abs() < 1e-4);
    let near = vector("a lantern at the harbour", 384);
    let far = vector("dragons sleep under mountains", 384);
    assert!(cosine(&a, &near) > cosine(&a, &far) + 0.2);
    assert!((cosine(&vector("", 8), &vector("  ", 8)) - 1.0).abs() < 1e-6);
}
