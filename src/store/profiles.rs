//! A tenant's profiles rows (`profiles` table, one JSON body per tenant),
//! read by both stores together with the global settings.

use super::TenantSettings;
use crate::domain::ids::Tenant;
use crate::domain::profiles::Profiles;

/// Joins the global settings rows with the profiles rows and their claim
/// clocks (a tenant may have either alone), in tenant order.
pub(crate) fn with_profiles(
    mut settings: Vec<TenantSettings>,
    profiles: Vec<(Tenant, Profiles, u64)>,
) -> Vec<TenantSettings> {
    for (tenant, profiles, clock) in profiles {
        match settings.iter_mut().find(|s| s.tenant == tenant) {
            Some(held) => {
                held.profiles = profiles;
                held.clock = held.clock.max(clock);
            }
            None => settings.push(TenantSettings {
                tenant,
                profiles,
                clock,
                ..TenantSettings::default()
            }),
        }
    }
    settings.sort_by(|a, b| a.tenant.name().cmp(b.tenant.name()));
    settings
}
