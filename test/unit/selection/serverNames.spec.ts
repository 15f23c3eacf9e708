import assert from 'node:assert/strict';
import { ServerNames, serverName } from '../../../src/core/selection/serverNames';

describe('server names in a text', () => {
  const servers = ['chatwork', 'searchconsole', 'ats', 'forms', 'keep', 'mcp-server-github', 'io'];
  const names = new ServerNames(servers);
  const named = (text: string): string[] => [...names.named(text)].map((i) => servers[i]!).sort();

  it('reads a server id as the name people write, without "mcp" and "server"', () => {
    assert.equal(serverName('mcp-server-github'), 'github');
    assert.equal(serverName('Search_Console'), 'searchconsole');
    assert.equal(serverName('io'), undefined, 'too short to name a server');
  });

  it('finds a server named as a word, in any case, also written apart or with a plural s', () => {
    assert.deepEqual(named('accept the pending Chatwork contact requests'), ['chatwork']);
    assert.deepEqual(named('add our new domain to search console'), ['searchconsole']);
    assert.deepEqual(named('pull the open jobs from the ATS'), ['ats']);
    assert.deepEqual(named('update the rsvp form and save it in a keep note'), ['forms', 'keep']);
    assert.deepEqual(named('open an issue on GitHub'), ['mcp-server-github']);
  });

  it('does not find a name inside another word, nor a short name without its s', () => {
    assert.deepEqual(named('look at the cats and the chatworks'), ['chatwork']);
    assert.deepEqual(named('meet at noon in formal wear'), []);
  });

  it('finds a Latin name beside Japanese or Chinese text', () => {
    assert.deepEqual(named('いま開いている求人をATSから取得して'), ['ats']);
  });

  it('tells a name that is also an ordinary word from a made-up one', () => {
    const words = new Set(['keep', 'forms', 'form']);
    const withWords = new ServerNames(servers, (w) => words.has(w));
    assert.deepEqual(servers.map((_, i) => withWords.isPlainWord(i)), [false, false, false, true, true, false, false]);
    assert.deepEqual(servers.map((_, i) => names.isPlainWord(i)), [true, true, true, true, true, true, false], 'without a dictionary every name may be a word ("io" names no server)');
  });
});
