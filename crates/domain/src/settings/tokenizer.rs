//! `tokenizer_name`: which `tokenizer.json` the HUGGING_FACE tokenizer
//! counts with, named by its file stem in the server's tokenizers
//! directory.

use crate::DomainError;

/// The longest tokenizer name, in bytes.
pub const MAX_TOKENIZER_NAME_BYTES: usize = 128;

/// Checks a tokenizer name whose errors name `field`: empty (none), or
/// 1..=[`MAX_TOKENIZER_NAME_BYTES`] bytes of ASCII letters, digits, `.`,
/// `_`, `-` and `+`, not starting with `.`. So a name is a file stem
/// inside the tokenizers directory and never a path: no separator, no
/// `..`, no hidden file, nothing a file system reads specially.
pub fn tokenizer_name(field: &'static str) -> impl Fn(String) -> Result<String, DomainError> {
    move |name| {
        check_tokenizer_name(field, &name)?;
        Ok(name)
    }
}

/// See [`tokenizer_name`].
pub fn check_tokenizer_name(field: &str, name: &str) -> Result<(), DomainError> {
    if name.len() > MAX_TOKENIZER_NAME_BYTES {
        return Err(DomainError::invalid(
            field,
            format!(
                "a tokenizer name has at most {MAX_TOKENIZER_NAME_BYTES} bytes, not {}",
                name.len()
            ),
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+');
    if name.starts_with('.') || name.contains("..") || !name.chars().all(allowed) {
        return Err(DomainError::invalid(
            field,
            format!(
                "{name:?} is not a tokenizer name: a file stem of ASCII letters, digits, \
                 '.', '_', '-' and '+', not starting with '.' and without \"..\""
            ),
        ));
    }
    Ok(())
}
