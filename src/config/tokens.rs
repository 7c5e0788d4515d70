//! The tokens file (`--auth-tokens-file`) read into plain data: which
//! tenant each bearer token names. The gRPC layer builds its token table
//! from it (`auth::TokenTable`, assembled by [`crate::app`]), so
//! the configuration holds no type of the transport.
//!
//! The file has one `TENANT TOKEN` pair per line, separated by white space;
//! blank lines and lines starting with `#` are ignored.

use std::collections::BTreeMap;
use std::path::Path;

/// The tenants' bearer tokens, each token mapped to its tenant's name.
/// Invariants (checked by [`TenantTokens::parse`]): at least one token,
/// each of at least 16 characters and given to one tenant only; a tenant
/// name of at most 128 bytes with no control character. Its `Debug` shows
/// the number of tokens, never a token.
#[derive(Clone, PartialEq, Eq)]
pub struct TenantTokens {
    tenant_by_token: BTreeMap<String, String>,
}

impl std::fmt::Debug for TenantTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TenantTokens({} tokens)", self.tenant_by_token.len())
    }
}

impl TenantTokens {
    /// Reads a tokens file; an error names the path and, for a malformed
    /// line, its number (but not its content, which may hold a token).
    pub fn load(path: &Path) -> Result<TenantTokens, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TenantTokens::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the tokens file's text.
    pub fn parse(text: &str) -> Result<TenantTokens, String> {
        let mut tenant_by_token = BTreeMap::new();
        for (number, line) in (1..).zip(text.lines()) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [tenant, token] = fields[..] else {
                return Err(format!(
                    "line {number}: expected `TENANT TOKEN`, found {} fields",
                    fields.len()
                ));
            };
            if tenant.chars().any(char::is_control) || tenant.len() > 128 {
                return Err(format!(
                    "line {number}: a tenant name has at most 128 bytes and no control characters"
                ));
            }
            if token.len() < 16 {
                return Err(format!("line {number}: a token has at least 16 characters"));
            }
            if tenant_by_token
                .insert(token.to_owned(), tenant.to_owned())
                .is_some()
            {
                return Err(format!(
                    "line {number}: this token is already given to a tenant"
                ));
            }
        }
        if tenant_by_token.is_empty() {
            return Err("no `TENANT TOKEN` line".into());
        }
        Ok(TenantTokens { tenant_by_token })
    }

    /// Each token and the name of the tenant it stands for.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.tenant_by_token
            .iter()
            .map(|(token, tenant)| (token.as_str(), tenant.as_str()))
    }

    /// How many tokens there are (at least one).
    pub fn len(&self) -> usize {
        self.tenant_by_token.len()
    }

    /// Always `false`: a tokens file without a token is refused.
    pub fn is_empty(&self) -> bool {
        self.tenant_by_token.is_empty()
    }
}

#[cfg(test)]
mod tests;
