import assert from 'node:assert/strict';
import { ChatSessions, chatIdFromHistory } from '../../../src/core/chat/chatSessions';

describe('ChatSessions', () => {
  it('gives each chat its own sticky tools, loop detector and turn count', () => {
    const chats = new ChatSessions();
    const a = chats.get('a');
    const b = chats.get('b');
    a.turns++;
    a.sticky.record(1, ['files_read_file']);
    a.loops.startTurn(1);
    a.loops.record('files_read_file', { path: 'x' }, 'digest', false);
    assert.deepEqual(chats.get('a').sticky.get(2).map((s) => s.name), ['files_read_file']);
    assert.deepEqual(b.sticky.get(2), []);
    assert.equal(b.loops.history().length, 0);
    assert.equal(chats.get('a').turns, 1);
    assert.equal(chats.get('b').turns, 0);
  });

  it('forgets the chat used least recently past its bound', () => {
    const chats = new ChatSessions({ maxChats: 2 });
    chats.get('a');
    chats.get('b');
    chats.get('a');
    chats.get('c');
    assert.equal(chats.size, 2);
    assert.ok(chats.peek('a') && chats.peek('c'));
    assert.equal(chats.peek('b'), undefined);
    assert.equal(chats.latest?.id, 'c');
  });

  it('reads loop settings when a chat starts', () => {
    let perTool: Record<string, unknown> = {};
    const chats = new ChatSessions({ loopOptions: () => ({ perTool: perTool as never }) });
    const before = chats.get('a');
    perTool = { 'x_*': { sameArgs: 9 } };
    const after = chats.get('b');
    assert.notDeepEqual(before.loops.thresholdsFor('x_y'), after.loops.thresholdsFor('x_y'));
  });
});

describe('chatIdFromHistory', () => {
  it('finds the id this participant left in its last answer, else makes one', () => {
    const history = [
      { participant: 'other', result: { metadata: { chatId: 'not-ours' } } },
      { participant: 'me', result: { metadata: { chatId: 'chat-1' } } },
      { prompt: 'a request turn' },
    ];
    assert.equal(chatIdFromHistory(history, 'me', () => 'new'), 'chat-1');
    assert.equal(chatIdFromHistory([{ participant: 'other', result: { metadata: { chatId: 'x' } } }], 'me', () => 'new'), 'new');
    assert.equal(chatIdFromHistory([{ participant: 'me', result: { metadata: { chatId: 42 } } }], 'me', () => 'new'), 'new');
  });
});
