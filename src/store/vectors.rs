//! Recall vectors as rows store them: a vector's numbers as little-endian
//! 32-bit floats, one after the other (four bytes each).

use crate::store::StoreError;

/// The bytes a vector is stored as.
pub(crate) fn to_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector stored as `bytes`; a length that is not a multiple of four
/// is a corrupt row.
pub(crate) fn from_bytes(bytes: &[u8]) -> Result<Vec<f32>, StoreError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(StoreError::corrupt(
            "recall vector".to_owned(),
            format!("{} bytes, not a whole number of 32-bit floats", bytes.len()),
        ));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// A fingerprint as stored: the same 64 bits, read as signed.
pub(crate) fn fingerprint_column(fingerprint: u64) -> i64 {
    fingerprint.cast_signed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_and_bad_lengths_are_corrupt() {
        let v = vec![0.5, -1.25, 3.0e-7, f32::MAX];
        assert_eq!(from_bytes(&to_bytes(&v)).expect("four floats"), v);
        assert!(from_bytes(&[1, 2, 3]).is_err());
        assert_eq!(fingerprint_column(u64::MAX), -1);
    }
}
