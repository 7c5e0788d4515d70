-- Settings profiles (issue 43): a tenant's named settings patches, their
-- bindings to characters and groups, and its group chats' groups, as one
-- JSON body per tenant (`domain::profiles::Profiles`; bounded counts).
CREATE TABLE profiles (
    tenant TEXT PRIMARY KEY,
    body TEXT NOT NULL
);
