//! The character data of a card's PNG, read as SillyTavern's
//! `src/character-card-parser.js` `read` reads it (at 51ad27f): every
//! chunk CRC-checked up to `IEND` (png-chunks-extract throws otherwise),
//! the `tEXt` chunks' keywords compared lower-cased, `ccv3` before
//! `chara`, the first of each, its text base64 read as Node's
//! `Buffer.from(text, 'base64')` reads it and then as UTF-8 with
//! replacement characters (`toString('utf8')`).

use crate::DomainError;
use base64::Engine;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use png::{Decoded, StreamingDecoder};

/// The PNG file signature.
pub(super) const SIGNATURE: [u8; 8] = [137, 80, 78, 71, 13, 10, 26, 10];

fn unreadable(why: impl std::fmt::Display) -> DomainError {
    DomainError::invalid("card", format!("not a readable PNG: {why}"))
}

/// The character JSON text a card's PNG carries; [`DomainError::Invalid`]
/// (field `card`) for a PNG SillyTavern cannot read (bad chunk, bad CRC,
/// truncated) or one without a `ccv3`/`chara` chunk.
pub(super) fn character_text(png: &[u8]) -> Result<String, DomainError> {
    let mut decoder = StreamingDecoder::new();
    // png-chunks-extract throws on any CRC mismatch, ancillary or not.
    decoder.set_skip_ancillary_crc_failures(false);
    let mut rest = png;
    loop {
        let (used, decoded) = decoder.update(rest, None).map_err(unreadable)?;
        rest = &rest[used..];
        match decoded {
            Decoded::ChunkComplete(png::chunk::IEND) => break,
            _ if rest.is_empty() || (used == 0 && matches!(decoded, Decoded::Nothing)) => {
                return Err(unreadable("the file ends before its IEND chunk"));
            }
            _ => {}
        }
    }
    let texts = decoder
        .info()
        .map(|info| info.uncompressed_latin1_text.as_slice())
        .unwrap_or_default();
    let text = ["ccv3", "chara"]
        .into_iter()
        .find_map(|name| {
            texts
                .iter()
                .find(|chunk| chunk.keyword.to_lowercase() == name)
        })
        .ok_or_else(|| {
            DomainError::invalid("card", "the PNG has no `ccv3` or `chara` tEXt chunk")
        })?;
    Ok(String::from_utf8_lossy(&node_base64(&text.text)).into_owned())
}

/// `text` decoded as Node's `Buffer.from(text, 'base64')` decodes it:
/// both alphabets (`+/` and `-_`), characters outside them skipped, the
/// first `=` ends the data, a last lone character dropped.
pub(super) fn node_base64(text: &str) -> Vec<u8> {
    let mut clean: Vec<u8> = text
        .bytes()
        .take_while(|&b| b != b'=')
        .filter_map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' => Some(b),
            b'-' => Some(b'+'),
            b'_' => Some(b'/'),
            _ => None,
        })
        .collect();
    if clean.len() % 4 == 1 {
        clean.pop();
    }
    let engine = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::RequireNone)
            .with_decode_allow_trailing_bits(true),
    );
    // Only alphabet characters, no padding, length not 1 mod 4: decodes.
    engine.decode(&clean).unwrap_or_default()
}
