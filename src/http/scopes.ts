// Local scope names the admin API and the webhook check (as `<xsappname>.<name>`). xs-security.json declares
// the same names; test/unit/deployment.test.ts keeps the two from drifting apart.
export const SCOPES = { viewer: 'Viewer', admin: 'Admin', eventSubmit: 'EventSubmit' } as const;
