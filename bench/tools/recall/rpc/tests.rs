use super::*;

#[test]
fn quantiles_interpolate_within_the_bucket_of_the_difference() {
    let text =
        "h_bucket{le=\"0.001\"} 10\nh_bucket{le=\"0.01\"} 20\nh_bucket{le=\"+Inf\"} 20\nh_sum 1\n";
    let before = buckets(
        "h_bucket{le=\"0.001\"} 10\nh_bucket{le=\"0.01\"} 10\nh_bucket{le=\"+Inf\"} 10\n",
        "h",
    );
    let after = buckets(text, "h");
    assert_eq!(after.len(), 3);
    // The 10 new observations all lie in (1 ms, 10 ms].
    let p50 = quantile_ms(&before, &after, 0.5).expect("observations");
    assert!((p50 - 5.5).abs() < 1e-9, "{p50}");
    assert_eq!(quantile_ms(&after, &after, 0.5), None);
}
