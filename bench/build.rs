//! Compiles the bare baseline's proto (`proto/bench/v1/bare.proto`) with the
//! vendored `protoc` from `protoc-bin-vendored`. recapd's own proto comes
//! compiled with the `recapd` crate (`recapd::grpc::pb`).

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let well_known = protoc_bin_vendored::include_path()?;
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure().compile_with_config(
        config,
        &[Path::new("proto/bench/v1/bare.proto")],
        &[Path::new("proto"), well_known.as_path()],
    )?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
