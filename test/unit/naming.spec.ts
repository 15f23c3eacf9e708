import assert from 'node:assert/strict';
import {
  MAX_SERVER_PREFIX_LENGTH,
  MAX_TOOL_NAME_LENGTH,
  TOOL_NAME_PATTERN,
  assignServerPrefixes,
  assignToolNames,
  elideMiddle,
  sanitizeNamePart,
  serverPrefix,
  shortHash,
  type NameRequest,
} from '../../src/core/router/naming';

/** The rule every model provider accepts, written out here so the test does not trust the module's own constant. */
const PROVIDER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const HASH_SUFFIX = /_[0-9a-f]{6}$/;

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Names the way ToolRouter.rebuildCatalogue does: servers sorted, tools sorted within each server. */
function routerNames(requests: readonly NameRequest[], extraServers: readonly string[] = []): Map<string, string> {
  const sorted = [...requests].sort((a, b) => compare(a.server, b.server) || compare(a.tool, b.tool));
  const servers = [...new Set([...sorted.map((r) => r.server), ...extraServers])].sort(compare);
  const names = assignToolNames(sorted, assignServerPrefixes(servers));
  return new Map(sorted.map((r, i) => [key(r), names[i]!]));
}

function key(r: NameRequest): string {
  return `${r.server}\u0000${r.tool}`;
}

function assertAllValidAndUnique(names: readonly string[]): void {
  for (const name of names) assert.match(name, PROVIDER_NAME, `"${name}" is not a valid provider tool name`);
  const lower = names.map((n) => n.toLowerCase());
  assert.equal(new Set(lower).size, names.length, `names are not unique case-insensitively: ${names.join(', ')}`);
}

/** A fixed, order-scrambling permutation (no randomness: a failing run must be repeatable). */
function scramble<T>(items: readonly T[], step: number): T[] {
  const out: T[] = [];
  const used = new Set<number>();
  let j = 0;
  while (out.length < items.length) {
    j = (j + step) % items.length;
    while (used.has(j)) j = (j + 1) % items.length;
    used.add(j);
    out.push(items[j]!);
  }
  return out;
}

const AWKWARD_TOOL_NAMES = [
  '',
  ' ',
  'get user',
  'get.user',
  'files/read',
  'naïve-tool',
  'emoji_😀_tool',
  '日本語',
  '$$$',
  '-leading-dash',
  'x'.repeat(200),
  `${'a'.repeat(63)}.${'b'.repeat(63)}`,
  'CamelCaseTool',
  'camelcasetool',
];

describe('naming', () => {
  describe('TOOL_NAME_PATTERN', () => {
    it('is the provider rule ^[a-zA-Z0-9_-]{1,64}$', () => {
      assert.equal(TOOL_NAME_PATTERN.source, PROVIDER_NAME.source);
      assert.equal(MAX_TOOL_NAME_LENGTH, 64);
    });
  });

  describe('sanitizeNamePart', () => {
    it('keeps letters, digits, underscores and dashes as they are', () => {
      assert.equal(sanitizeNamePart('Get-User_2'), 'Get-User_2');
    });

    it('replaces every other character with an underscore, one for one', () => {
      assert.equal(sanitizeNamePart('get.user/by id'), 'get_user_by_id');
      assert.equal(sanitizeNamePart('naïve'), 'na_ve');
      assert.equal(sanitizeNamePart('a:b@c'), 'a_b_c');
    });

    it('turns an empty name into a single underscore', () => {
      assert.equal(sanitizeNamePart(''), '_');
    });

    it('always returns only allowed characters', () => {
      for (const raw of AWKWARD_TOOL_NAMES) assert.match(sanitizeNamePart(raw), /^[a-zA-Z0-9_-]+$/, JSON.stringify(raw));
    });
  });

  describe('elideMiddle', () => {
    it('returns text that already fits unchanged', () => {
      assert.equal(elideMiddle('abcdef', 10), 'abcdef');
      assert.equal(elideMiddle('abcdef', 6), 'abcdef');
    });

    it('keeps the head and the tail around an underscore mark', () => {
      assert.equal(elideMiddle('abcdefghij', 5), 'ab_ij');
      assert.equal(elideMiddle('abcdefghij', 6), 'abc_ij');
    });

    it('handles the smallest limits', () => {
      assert.equal(elideMiddle('abcdef', 2), 'a_');
      assert.equal(elideMiddle('abcdef', 1), 'a');
      assert.equal(elideMiddle('abcdef', 0), '');
    });

    it('always returns exactly min(length, max) characters', () => {
      const text = 'abcdefghijklmnopqrstuvwxyz';
      for (let len = 0; len <= text.length; len++) {
        for (let max = 0; max <= 30; max++) {
          const out = elideMiddle(text.slice(0, len), max);
          assert.equal(out.length, Math.min(len, max), `len ${len}, max ${max}: "${out}"`);
        }
      }
    });
  });

  describe('serverPrefix', () => {
    it('sanitises the server name', () => {
      assert.equal(serverPrefix('my server'), 'my_server');
    });

    it(`never exceeds ${MAX_SERVER_PREFIX_LENGTH} characters and keeps both ends`, () => {
      const prefix = serverPrefix(`start${'x'.repeat(50)}end`);
      assert.equal(prefix.length, MAX_SERVER_PREFIX_LENGTH);
      assert.ok(prefix.startsWith('start'));
      assert.ok(prefix.endsWith('end'));
    });
  });

  describe('assignServerPrefixes', () => {
    it('gives distinct servers their plain sanitised prefix', () => {
      const prefixes = assignServerPrefixes(['github', 'file system']);
      assert.deepEqual([...prefixes], [
        ['github', 'github'],
        ['file system', 'file_system'],
      ]);
    });

    it('separates "my server" and "my.server", which both sanitise to my_server', () => {
      const prefixes = assignServerPrefixes(['my server', 'my.server']);
      const a = prefixes.get('my server')!;
      const b = prefixes.get('my.server')!;
      assert.notEqual(a, b);
      for (const p of [a, b]) {
        assert.match(p, /^my_server_[0-9a-f]{6}$/);
        assert.ok(p.length <= MAX_SERVER_PREFIX_LENGTH);
      }
      assert.equal(a, `my_server_${shortHash('my server')}`);
    });

    it('separates names that differ only in case', () => {
      const prefixes = assignServerPrefixes(['GitHub', 'github']);
      assert.notEqual(prefixes.get('GitHub')!.toLowerCase(), prefixes.get('github')!.toLowerCase());
    });

    it('separates long names that differ only in the elided middle, within the prefix length', () => {
      const a = `${'x'.repeat(20)}A${'x'.repeat(20)}`;
      const b = `${'x'.repeat(20)}B${'x'.repeat(20)}`;
      const prefixes = assignServerPrefixes([a, b]);
      assert.notEqual(prefixes.get(a), prefixes.get(b));
      for (const p of prefixes.values()) {
        assert.ok(p.length <= MAX_SERVER_PREFIX_LENGTH, p);
        assert.match(p, PROVIDER_NAME);
      }
    });

    it('leaves a non-colliding server alone when others collide', () => {
      const prefixes = assignServerPrefixes(['my server', 'my.server', 'memory']);
      assert.equal(prefixes.get('memory'), 'memory');
    });

    it('does not depend on the order of the server names', () => {
      const names = ['my server', 'my.server', 'GitHub', 'github', 'memory', 'x'.repeat(40)];
      const expected = assignServerPrefixes(names);
      for (const step of [1, 2, 3, 5]) assert.deepEqual(new Map([...assignServerPrefixes(scramble(names, step))].sort()), new Map([...expected].sort()));
    });

    it('keeps existing prefixes when an unrelated server is added', () => {
      const before = assignServerPrefixes(['my server', 'my.server', 'memory']);
      const after = assignServerPrefixes(['my server', 'my.server', 'memory', 'weather']);
      for (const [name, prefix] of before) assert.equal(after.get(name), prefix, name);
    });
  });

  describe('assignToolNames', () => {
    it('joins the server prefix and the tool name with an underscore', () => {
      const names = assignToolNames([{ server: 'github', tool: 'create_issue' }], assignServerPrefixes(['github']));
      assert.deepEqual(names, ['github_create_issue']);
    });

    it('returns names in the order of the requests', () => {
      const requests = [
        { server: 'b', tool: 'two' },
        { server: 'a', tool: 'one' },
      ];
      assert.deepEqual(assignToolNames(requests, assignServerPrefixes(['a', 'b'])), ['b_two', 'a_one']);
    });

    it('uses the prefix from the map, and the plain server prefix for servers missing from it', () => {
      const names = assignToolNames(
        [
          { server: 'mapped', tool: 't' },
          { server: 'un mapped', tool: 't' },
        ],
        new Map([['mapped', 'custom']]),
      );
      assert.deepEqual(names, ['custom_t', 'un_mapped_t']);
    });

    it('returns an empty list for no requests', () => {
      assert.deepEqual(assignToolNames([], new Map()), []);
    });

    it('makes every awkward name valid and unique, whatever the server name', () => {
      const servers = ['s', 'my server', 'x'.repeat(100), '😀', ''];
      const requests = servers.flatMap((server) => AWKWARD_TOOL_NAMES.map((tool) => ({ server, tool })));
      const names = assignToolNames(requests, assignServerPrefixes(servers));
      assert.equal(names.length, requests.length);
      assertAllValidAndUnique(names);
    });

    it('separates tools that collide after sanitising ("get.user" and "get/user" on one server)', () => {
      const names = assignToolNames(
        [
          { server: 's', tool: 'get.user' },
          { server: 's', tool: 'get/user' },
        ],
        assignServerPrefixes(['s']),
      );
      assertAllValidAndUnique(names);
      assert.deepEqual(names, [`s_get_user_${shortHash('s', 'get.user')}`, `s_get_user_${shortHash('s', 'get/user')}`]);
    });

    it('gives a colliding tool a suffix that depends only on its own (server, tool) pair', () => {
      const prefixes = assignServerPrefixes(['s']);
      const withSlash = assignToolNames([{ server: 's', tool: 'get.user' }, { server: 's', tool: 'get/user' }], prefixes)[0];
      const withSpace = assignToolNames([{ server: 's', tool: 'get.user' }, { server: 's', tool: 'get user' }], prefixes)[0];
      assert.equal(withSlash, withSpace);
    });

    it('keeps the distinct tails of two 80-character names that differ only at the end', () => {
      const stem = `list_${'very_long_'.repeat(7)}`; // 75 characters
      const a = `${stem}_byid`;
      const b = `${stem}_bytk`;
      assert.equal(a.length, 80);
      assert.equal(b.length, 80);
      const [na, nb] = assignToolNames(
        [
          { server: 'srv', tool: a },
          { server: 'srv', tool: b },
        ],
        assignServerPrefixes(['srv']),
      );
      assertAllValidAndUnique([na!, nb!]);
      assert.equal(na!.length, 64);
      assert.ok(na!.endsWith('_byid'), na);
      assert.ok(nb!.endsWith('_bytk'), nb);
      assert.ok(na!.startsWith(`srv_${a.slice(0, 20)}`), na);
      // They differ in their kept tails, so no hash suffix is needed.
      assert.equal(na, `srv_${a.slice(0, 30)}_${a.slice(-29)}`);
    });

    it('separates long names that collide after truncation (they differ only in the elided middle)', () => {
      const a = `${'a'.repeat(50)}X${'z'.repeat(49)}`;
      const b = `${'a'.repeat(50)}Y${'z'.repeat(49)}`;
      const names = assignToolNames(
        [
          { server: 'srv', tool: a },
          { server: 'srv', tool: b },
        ],
        assignServerPrefixes(['srv']),
      );
      assertAllValidAndUnique(names);
      for (const n of names) {
        assert.match(n, HASH_SUFFIX);
        assert.ok(n.startsWith('srv_aaaa'), n);
      }
    });

    it('separates collisions across servers ("a_b" + "c" and "a" + "b_c")', () => {
      const names = assignToolNames(
        [
          { server: 'a_b', tool: 'c' },
          { server: 'a', tool: 'b_c' },
        ],
        assignServerPrefixes(['a', 'a_b']),
      );
      assertAllValidAndUnique(names);
      for (const n of names) assert.match(n, /^a_b_c_[0-9a-f]{6}$/);
    });

    it('separates names that differ only in case', () => {
      const names = assignToolNames(
        [
          { server: 's', tool: 'Search' },
          { server: 's', tool: 'search' },
        ],
        assignServerPrefixes(['s']),
      );
      assertAllValidAndUnique(names);
      assert.ok(names[0]!.startsWith('s_Search_'), names[0]);
      assert.ok(names[1]!.startsWith('s_search_'), names[1]);
    });

    it('stays unique when a suffixed name equals another tool\u2019s plain name', () => {
      const lookalike = `dup_a_${shortHash('s', 'dup.a')}`;
      const names = assignToolNames(
        [
          { server: 's', tool: 'dup.a' },
          { server: 's', tool: 'dup/a' },
          { server: 's', tool: lookalike },
        ],
        assignServerPrefixes(['s']),
      );
      assertAllValidAndUnique(names);
    });

    it('stays within 64 characters when the prefix is as long as it can be and the names collide', () => {
      const server = 'p'.repeat(MAX_SERVER_PREFIX_LENGTH);
      const names = assignToolNames(
        [
          { server, tool: `${'t'.repeat(90)}.x` },
          { server, tool: `${'t'.repeat(90)}/x` },
        ],
        assignServerPrefixes([server]),
      );
      assertAllValidAndUnique(names);
      for (const n of names) assert.equal(n.length, 64);
    });

    describe('determinism', () => {
      const requests: NameRequest[] = [
        { server: 'my server', tool: 'get.user' },
        { server: 'my server', tool: 'get/user' },
        { server: 'my.server', tool: 'get_user' },
        { server: 'a_b', tool: 'c' },
        { server: 'a', tool: 'b_c' },
        { server: 'github', tool: 'Search' },
        { server: 'github', tool: 'search' },
        { server: 'github', tool: `${'x'.repeat(70)}_by_id` },
        { server: 'github', tool: `${'x'.repeat(70)}_by_email` },
        { server: 'memory', tool: 'read_graph' },
      ];

      it('names every tool the same whatever order the tools arrive in (sorted as the router does)', () => {
        const expected = routerNames(requests);
        assertAllValidAndUnique([...expected.values()]);
        for (const step of [1, 2, 3, 4, 7]) assert.deepEqual(routerNames(scramble(requests, step)), expected, `permutation step ${step}`);
      });

      it('maps each (server, tool) pair to the same name even without sorting', () => {
        const servers = [...new Set(requests.map((r) => r.server))];
        const byPair = (list: readonly NameRequest[]): Map<string, string> => {
          const names = assignToolNames(list, assignServerPrefixes(servers));
          return new Map(list.map((r, i) => [key(r), names[i]!]));
        };
        const expected = byPair(requests);
        for (const step of [1, 2, 3, 4, 7]) {
          const got = byPair(scramble(requests, step));
          for (const [k, name] of expected) assert.equal(got.get(k), name, k);
        }
      });

      it('does not rename existing tools when an unrelated tool or server is added', () => {
        const before = routerNames(requests);
        const after = routerNames([...requests, { server: 'github', tool: 'list_repos' }, { server: 'weather', tool: 'forecast' }]);
        for (const [k, name] of before) assert.equal(after.get(k), name, k);
      });

      it('returns the same names on repeated calls', () => {
        assert.deepEqual(routerNames(requests), routerNames(requests));
      });
    });
  });
});
