-- Settings profiles (issue 43): a tenant's named settings patches, their
-- bindings to characters and groups, and its group chats' groups, as one
-- JSON body per tenant (`domain::profiles::Profiles`; bounded counts).
-- Written with a claim of the tenant's settings clock, like
-- global_settings, and told to other replicas the same way.
CREATE TABLE profiles (tenant text PRIMARY KEY, body text NOT NULL);
