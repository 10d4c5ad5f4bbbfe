// The people who use the console and the admin API in the tests, as their identity provider knows them. What
// their tokens say of them beyond the user UUID is personal data: the log guard watches it (jwtSigner.ts), and
// the service names a user only by user UUID.

export interface Operator {
  /** The logon name: with the SAP ID service, the email address. */
  logonName: string;
  email: string;
  givenName: string;
  familyName: string;
  /** The user's id in SAP Cloud Identity Services: the `user_uuid` claim. */
  userUuid: string;
  /** XSUAA's own id of the user: `user_id` and `sub` of an XSUAA token. */
  xsuaaUserId: string;
}

export const ANN: Operator = {
  logonName: 'ann.fleetwood@fleet.example',
  email: 'ann.fleetwood@fleet.example',
  givenName: 'Annabel',
  familyName: 'Fleetwood',
  userUuid: '6d1c5a8e-3f0b-4b7e-9a44-0c2f5d7e9b11',
  xsuaaUserId: 'b7e1d2c4-58a9-4f63-8e0d-2a9c41f6e722',
};

export const BEN: Operator = {
  logonName: 'benedikt.viewer@fleet.example',
  email: 'benedikt.viewer@fleet.example',
  givenName: 'Benedikt',
  familyName: 'Lindqvist',
  userUuid: '0f4e8b2a-91c3-4d57-b6a8-73e2c5d0f933',
  xsuaaUserId: 'c3a9e5f1-2d7b-4c80-9f16-5b8d04e7a244',
};
