import assert from 'node:assert/strict';
import { BM25_K1, CLAUSE_WEIGHT, FIELD_WEIGHTS, LexicalRanker, topK } from '../../../src/core/selection/lexicalRanker';
import { lexicalTerms, plainTerms, stem, STOP_WORDS } from '../../../src/core/selection/lexicalTerms';
import { toolEmbeddingText, toolFields, type RankableTool } from '../../../src/core/selection/toolDocument';

/** A few tools shaped like server-filesystem's and server-memory's, enough to tell them apart. */
const TOOLS: RankableTool[] = [
  {
    id: 'files_read_text_file',
    name: 'read_text_file',
    description: 'Read the complete contents of a file from the file system as text.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, head: { type: 'number', description: 'Only the first N lines' } } },
  },
  {
    id: 'files_list_directory',
    name: 'list_directory',
    description: 'Get a detailed listing of all files and directories in a specified path.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  {
    id: 'memory_create_entities',
    name: 'create_entities',
    description: 'Create multiple new entities in the knowledge graph.',
    inputSchema: { type: 'object', properties: { entities: { type: 'array', items: { type: 'object', properties: { entityType: { type: 'string' } } } } } },
  },
  {
    id: 'weather_forecast',
    name: 'getForecast',
    description: 'Weather forecast for a city.',
    inputSchema: { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string', enum: ['celsius', 'fahrenheit'] } } },
  },
  {
    id: 'mail_send',
    name: 'send_email',
    description: 'Send an email message to a recipient.',
    inputSchema: { type: 'object', properties: { to: { type: 'string', description: 'Address of the recipient' } } },
  },
];

describe('lexicalTerms', () => {
  it('plainTerms only splits and lowercases', () => {
    assert.deepEqual(plainTerms('Please readTextFile, files'), ['please', 'read', 'text', 'file', 'files']);
  });

  it('splits identifiers, lowercases and drops stop words', () => {
    assert.deepEqual(lexicalTerms('Please can you readTextFile for me'), ['read', 'text', 'fil']);
    assert.deepEqual(lexicalTerms('list_directory'), ['list', 'directori']);
  });

  it('strips plural, -ing and -ed so word forms meet', () => {
    for (const [a, b] of [['files', 'file'], ['creating', 'create'], ['created', 'creates'], ['entities', 'entity'], ['running', 'run'], ['boxes', 'box']]) {
      assert.equal(stem(a), stem(b), `${a} and ${b} should share a stem`);
    }
  });

  it('leaves short words alone and keeps words that only look plural', () => {
    assert.equal(stem('bus'), 'bus');
    assert.equal(stem('status'), 'status');
    assert.equal(stem('address'), stem('address'));
    assert.notEqual(stem('news'), stem('new'));
  });

  it('keeps the action words that separate tools', () => {
    for (const word of ['get', 'list', 'find', 'send', 'show', 'delete']) assert.ok(!STOP_WORDS.has(word), `"${word}" must not be a stop word`);
  });
});

describe('lexicalTerms and numbers', () => {
  it('drops numbers of up to four digits, which are values, and keeps longer ones, which can be names', () => {
    assert.deepEqual(lexicalTerms('my passport expires on 2027-03-14 at 9'), ['passport', 'expir']);
    assert.deepEqual(lexicalTerms('12306 train tickets'), ['12306', 'train', 'ticket']);
    assert.deepEqual(lexicalTerms('convert mp3 to ipv4 s3'), ['convert', 'mp3', 'ipv4', 's3']);
  });
});

describe('lexicalTerms in Japanese', () => {
  it('keeps the long-vowel mark inside its katakana word, so no lone ー is left to meet every other', () => {
    assert.deepEqual(lexicalTerms('ラーメン'), ['ラー', 'ーメ', 'メン']);
    assert.ok(!lexicalTerms('東京タワーの近くのルート').includes('ー'));
  });

  it('drops pairs of hiragana, which are grammar rather than words', () => {
    const terms = lexicalTerms('ルームにメッセージを投稿してください');
    for (const grammar of ['して', 'てく', 'くだ', 'ださ', 'さい']) assert.ok(!terms.includes(grammar), grammar);
    for (const word of ['ルー', 'メッ', '投稿']) assert.ok(terms.includes(word), word);
  });
});

describe('toolFields', () => {
  it('reads parameter names, descriptions and enum values, nested ones included', () => {
    const weather = toolFields(TOOLS[3]!);
    assert.equal(weather.name, 'get Forecast');
    assert.deepEqual(weather.parameterNames, ['city', 'units']);
    assert.deepEqual(weather.enumValues, ['celsius', 'fahrenheit']);
    assert.deepEqual(toolFields(TOOLS[2]!).parameterNames, ['entities', 'entity Type']);
  });

  it('survives tools without a description or schema, and odd schemas', () => {
    assert.deepEqual(toolFields({ id: 'x', name: 'x' }), { name: 'x', description: '', parameterNames: [], parameterDescriptions: [], enumValues: [], server: '' });
    assert.equal(toolFields({ id: 'x', name: 'x', server: 'googleDrive' }).server, 'google Drive');
    assert.deepEqual(toolFields({ id: 'x', name: 'x', inputSchema: { properties: { a: true, b: null } } }).parameterNames, ['a', 'b']);
  });

  it('ranks a tool of the server a request names above an equal tool elsewhere', () => {
    const ranker = new LexicalRanker([
      { id: 'a_search', name: 'search', description: 'Search items', server: 'github' },
      { id: 'b_search', name: 'search', description: 'Search items', server: 'notion' },
    ]);
    assert.deepEqual(ranker.rank('search items in notion', 2).map((r) => r.id), ['b_search', 'a_search']);
  });

  it('builds the embedding text as name: description plus parameter names', () => {
    assert.equal(toolEmbeddingText(TOOLS[0]!), 'read text file: Read the complete contents of a file from the file system as text. path head');
    assert.equal(toolEmbeddingText({ id: 'x', name: 'ping' }), 'ping');
  });
});

describe('LexicalRanker', () => {
  const ranker = new LexicalRanker(TOOLS);

  it('returns one score per tool, aligned with the catalogue', () => {
    const scores = ranker.score('read a text file');
    assert.equal(scores.length, TOOLS.length);
    assert.equal(ranker.size, TOOLS.length);
    assert.ok(scores[0]! > 0);
    assert.equal(scores[3], 0, 'the weather tool shares no word with the request');
  });

  it('ranks the tool whose words the request uses first', () => {
    assert.equal(ranker.rank('show me the contents of notes.txt as text', 1)[0]!.id, 'files_read_text_file');
    assert.equal(ranker.rank('what is in this directory', 1)[0]!.id, 'files_list_directory');
    assert.equal(ranker.rank('add new entities to my knowledge graph', 1)[0]!.id, 'memory_create_entities');
  });

  it('matches word forms and split identifiers', () => {
    assert.equal(ranker.rank('emailing Bob', 1)[0]!.id, 'mail_send');
    assert.equal(ranker.rank('createEntities', 1)[0]!.id, 'memory_create_entities');
  });

  it('reads parameter descriptions and enum values, at lower weight than names', () => {
    assert.equal(ranker.rank('in fahrenheit please', 1)[0]!.id, 'weather_forecast');
    assert.equal(ranker.rank('recipient', 1)[0]!.id, 'mail_send');
    assert.ok(FIELD_WEIGHTS.name > FIELD_WEIGHTS.description && FIELD_WEIGHTS.description > FIELD_WEIGHTS.parameterDescriptions);
    const named = new LexicalRanker([
      { id: 'in-name', name: 'forecast', description: 'Tells what is coming.' },
      { id: 'in-description', name: 'outlook', description: 'A forecast of what is coming.' },
    ]);
    assert.equal(named.rank('forecast', 2)[0]!.id, 'in-name');
  });

  it('gives every tool 0 for a request of stop words only, and rank leaves them out', () => {
    assert.ok(ranker.score('can you please do it for me').every((s) => s === 0));
    assert.deepEqual(ranker.rank('can you please do it for me', 5), []);
    assert.deepEqual(ranker.rank('', 5), []);
  });

  it('rank returns at most k tools, best first, with their scores and catalogue positions', () => {
    const ranked = ranker.rank('file path directory', 2);
    assert.equal(ranked.length, 2);
    assert.ok(ranked[0]!.score >= ranked[1]!.score);
    for (const r of ranked) assert.equal(TOOLS[r.index]!.id, r.id);
    assert.deepEqual(ranker.rank('file', 0), []);
  });

  it('counts a repeated request word once', () => {
    assert.deepEqual(ranker.score('weather'), ranker.score('weather weather weather'));
  });

  it('scores stay below the BM25 bound (idf × (k1 + 1)) per field weight', () => {
    const single = new LexicalRanker([{ id: 'a', name: 'alpha', description: '' }, { id: 'b', name: 'beta', description: '' }]);
    const idf = Math.log(1 + (2 - 1 + 0.5) / (1 + 0.5));
    assert.ok(single.score('alpha')[0]! < idf * (BM25_K1 + 1));
    assert.ok(single.score('alpha')[0]! > 0);
  });

  it('lifts the tools of each step of a multi-step request (clauses)', () => {
    const query = 'read the text file report.txt, then send an email to Bob with its summary';
    const withClauses = ranker.score(query);
    const without = new LexicalRanker(TOOLS, { clauses: false }).score(query);
    const top2 = topK(withClauses, 2).map((i) => TOOLS[i]!.id).sort();
    assert.deepEqual(top2, ['files_read_text_file', 'mail_send']);
    for (let i = 0; i < TOOLS.length; i++) assert.ok(withClauses[i]! >= without[i]!, 'the best clause only adds');
    assert.ok(CLAUSE_WEIGHT > 0 && CLAUSE_WEIGHT < 1);
  });

  it('plainBm25 is the README floor: one field, no stop words, no stemming, no clauses', () => {
    const plain = new LexicalRanker(TOOLS, { plainBm25: true });
    assert.ok(plain.score('the')[0]! > 0, '"the" counts in plain BM25');
    assert.equal(plain.score('emailing')[4], 0, 'no stemming: emailing does not meet email');
    assert.ok(plain.score('fahrenheit').every((s) => s === 0), 'enum values are not part of the floor');
    assert.ok(plain.score('recipient')[4]! > 0, 'parameter descriptions are');
    assert.equal(plain.rank('read text file', 1)[0]!.id, 'files_read_text_file');
  });

  it('handles an empty catalogue', () => {
    const empty = new LexicalRanker([]);
    assert.equal(empty.score('anything').length, 0);
    assert.deepEqual(empty.rank('anything', 3), []);
  });
});

describe('topK', () => {
  it('keeps positive scores only, best first, ties in index order', () => {
    assert.deepEqual(topK([0, 2, 1, 2, -1], 10), [1, 3, 2]);
    assert.deepEqual(topK([3, 2, 1], 2), [0, 1]);
  });
});
