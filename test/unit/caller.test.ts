// How logs and stored records name who called: by a stable id from the token, never by what it says of the person.
import { IdentityServiceToken, XsuaaToken } from '@sap/xssec';
import { describe, expect, it } from 'vitest';
import { callerOf } from '../../src/http/auth.js';
import { jwtSigner } from '../support/jwtSigner.js';
import { ANN } from '../support/operators.js';

const signer = jwtSigner('caller-k1');
const person = { email: ANN.email, given_name: ANN.givenName, family_name: ANN.familyName };

describe('callerOf', () => {
  it('names an IAS user by user_uuid', () => {
    const jwt = signer.sign({ sub: ANN.userUuid, user_uuid: ANN.userUuid, azp: 'fon-console', ...person });
    expect(callerOf(new IdentityServiceToken(jwt))).toBe(`user/${ANN.userUuid}`);
  });

  it('names an IAS user without user_uuid by the subject', () => {
    const jwt = signer.sign({ sub: ANN.userUuid, azp: 'fon-console', sap_id_type: 'user', ...person });
    expect(callerOf(new IdentityServiceToken(jwt))).toBe(`user/${ANN.userUuid}`);
  });

  it("names an IAS application's token by its client", () => {
    const jwt = signer.sign({ sub: 'event-hub-client', azp: 'event-hub-client', sap_id_type: 'app' });
    expect(callerOf(new IdentityServiceToken(jwt))).toBe('client/event-hub-client');
  });

  it('names an XSUAA user by user_uuid, else by user id, and a client by its id', () => {
    const user = {
      grant_type: 'authorization_code',
      user_name: ANN.logonName,
      origin: 'sap.default',
      user_id: ANN.xsuaaUserId,
      sub: ANN.xsuaaUserId,
      azp: 'sb-fon!t1',
      cid: 'sb-fon!t1',
      ...person,
    };
    expect(callerOf(new XsuaaToken(signer.sign({ ...user, user_uuid: ANN.userUuid })))).toBe(
      `user/${ANN.userUuid}`,
    );
    expect(callerOf(new XsuaaToken(signer.sign(user)))).toBe(`user/${ANN.xsuaaUserId}`);
    const client = { grant_type: 'client_credentials', sub: 'sb-fon!t1', azp: 'sb-fon!t1', cid: 'sb-fon!t1' };
    expect(callerOf(new XsuaaToken(signer.sign(client)))).toBe('client/sb-fon!t1');
  });
});
