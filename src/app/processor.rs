//! The processor features the build assumed: recapd's x86-64 builds target
//! x86-64-v2 (`.cargo/config.toml`), so the compiler may use its
//! instructions anywhere in recapd's code. Run on a processor without
//! them (a pre-2009 one, or a virtual machine given a generic CPU model
//! such as QEMU's `qemu64` or `kvm64`), such a binary would die of an
//! illegal instruction at some later, unpredictable moment; checked
//! first, it refuses to start and says what to do. The standard library is
//! built for the baseline and does not use them, so the check itself runs
//! anywhere.

/// The features this binary was built to use that the processor running
/// it lacks (empty on a suitable processor and on other architectures).
pub fn missing_features() -> Vec<&'static str> {
    #[allow(unused_mut)]
    let mut missing = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        macro_rules! check {
            ($($feature:tt),*) => {$(
                if cfg!(target_feature = $feature) && !std::arch::is_x86_feature_detected!($feature) {
                    missing.push($feature);
                }
            )*};
        }
        check!("sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "cmpxchg16b");
    }
    missing
}

/// The message for a processor missing `features`.
pub fn refusal(features: &[&str]) -> String {
    format!(
        "this recapd was built for x86-64-v2 and this processor lacks {}; \
         give the virtual machine the host's CPU model, or build recapd with \
         RUSTFLAGS=\"-C target-cpu=x86-64\" cargo build --release",
        features.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_that_runs_the_tests_has_what_the_build_assumed() {
        // The tests run on the machines recapd is built on: a missing
        // feature here means the check or the build's target is wrong.
        assert_eq!(missing_features(), Vec::<&str>::new());
        let message = refusal(&["popcnt", "sse4.2"]);
        assert!(message.contains("lacks popcnt, sse4.2"), "{message}");
        assert!(message.contains("target-cpu=x86-64"), "{message}");
    }
}
