import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RouterOAuthProvider, type AuthStore, type StoredAuth } from '../../../src/core/auth/oauthProvider';

/** A store in memory: what the provider keeps is the subject here, not where. */
class MemoryAuthStore implements AuthStore {
  readonly saved = new Map<string, StoredAuth>();
  load(key: string): Promise<StoredAuth | undefined> {
    return Promise.resolve(this.saved.get(key));
  }
  save(key: string, value: StoredAuth): Promise<void> {
    this.saved.set(key, value);
    return Promise.resolve();
  }
  delete(key: string): Promise<void> {
    this.saved.delete(key);
    return Promise.resolve();
  }
}

const AS1 = 'http://as1.example/';
const SIGNED_IN: StoredAuth = {
  client: { client_id: 'as1-client', issuer: AS1 },
  tokens: { access_token: 'as1-token', token_type: 'Bearer', issuer: AS1 },
  discovery: { authorizationServerUrl: AS1, resourceMetadata: { resource: 'http://mcp.example/mcp', authorization_servers: [AS1] } },
};

describe('OAuth: the server moves to another authorization server (SEP-2352)', () => {
  let server: Server;
  let url: string;
  before(async () => {
    // A resource server that refuses every token, as one does once its authorization server changed.
    server = createServer((req, res) => {
      res.writeHead(req.headers.authorization ? 401 : 200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => server.close());

  async function signedInProvider(): Promise<{ provider: RouterOAuthProvider; store: MemoryAuthStore }> {
    const store = new MemoryAuthStore();
    const provider = new RouterOAuthProvider('s', url, undefined, store, undefined);
    await provider.prepare();
    await provider.saveDiscoveryState(SIGNED_IN.discovery!);
    await provider.saveClientInformation(SIGNED_IN.client!);
    await provider.saveTokens(SIGNED_IN.tokens!);
    return { provider, store };
  }

  it('forgets where it found the authorization server when the server refuses its token, so auth() looks again', async () => {
    const { provider, store } = await signedInProvider();
    const response = await provider.watchRefusals()(url, { method: 'POST', headers: { authorization: 'Bearer as1-token' } });
    assert.equal(response.status, 401);
    assert.equal(provider.discoveryState(), undefined);
    // The registration and tokens stay, stamped with their issuer: auth() discards them for another one.
    assert.deepEqual(provider.clientInformation(), SIGNED_IN.client);
    assert.deepEqual(provider.tokens(), SIGNED_IN.tokens);
    assert.equal([...store.saved.values()][0]?.discovery, undefined, 'forgotten in the store too');
  });

  it('keeps the discovery for a request that carried no token (the first one, before sign-in)', async () => {
    const { provider } = await signedInProvider();
    const response = await provider.watchRefusals()(url, { method: 'POST' });
    assert.equal(response.status, 200);
    assert.deepEqual(provider.discoveryState(), SIGNED_IN.discovery);
  });
});
