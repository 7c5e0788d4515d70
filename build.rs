//! Compiles `proto/` with the vendored `protoc` from `protoc-bin-vendored`,
//! so a machine with only the Rust toolchain can build recapd.

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let well_known = protoc_bin_vendored::include_path()?;
    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure()
        .file_descriptor_set_path(out_dir.join("recap_v1_descriptor.bin"))
        .compile_with_config(
            config,
            &[Path::new("proto/recap/v1/recap.proto")],
            &[Path::new("proto"), well_known.as_path()],
        )?;
    println!("cargo:rerun-if-changed=proto");
    Ok(())
}
