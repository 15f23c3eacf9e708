import assert from 'node:assert/strict';
import { EXIT_CODES, byteLength, exitCodeFor, type CallEnvelope } from '../../src/core/router/callEnvelope';
import type { CallErrorType } from '../../src/core/errors/callErrors';

const meta = { latencyMs: 3, bytes: 10, server: 'srv', tool: 'tool' };

function failure(type: CallErrorType): CallEnvelope {
  return { ok: false, error: { type, message: `${type} happened`, retryable: false }, meta };
}

/** Typed as a full Record so adding an error type without deciding its exit code fails type checking. */
const EXPECTED_EXIT_CODES: Record<CallErrorType, number> = {
  INVALID_ARGUMENTS: 2,
  SCHEMA_UNAVAILABLE: 2,
  LOOP_DETECTED: 2,
  NOT_APPROVED: 2,
  TOOL_ERROR: 3,
  INVALID_RESULT: 3,
  PROTOCOL_ERROR: 3,
  UNKNOWN_TOOL: 4,
  SERVER_UNAVAILABLE: 5,
  SERVER_RESTARTED: 5,
  TIMEOUT: 5,
  CANCELLED: 5,
};

describe('callEnvelope', () => {
  describe('EXIT_CODES', () => {
    it('are the documented CLI exit codes', () => {
      assert.deepEqual(EXIT_CODES, { ok: 0, usage: 1, invalidArguments: 2, toolError: 3, unknownTool: 4, serverUnavailable: 5 });
    });
  });

  describe('exitCodeFor', () => {
    it('returns 0 for a successful call', () => {
      assert.equal(exitCodeFor({ ok: true, content: [{ type: 'text', text: 'done' }], meta }), 0);
    });

    it('returns 0 for a successful call with no content', () => {
      assert.equal(exitCodeFor({ ok: true, content: [], structuredContent: { a: 1 }, meta }), 0);
    });

    for (const [type, code] of Object.entries(EXPECTED_EXIT_CODES) as Array<[CallErrorType, number]>) {
      it(`returns ${code} for ${type}`, () => {
        assert.equal(exitCodeFor(failure(type)), code);
      });
    }

    it('never uses the usage code (1) for a call result', () => {
      for (const type of Object.keys(EXPECTED_EXIT_CODES) as CallErrorType[]) assert.notEqual(exitCodeFor(failure(type)), EXIT_CODES.usage, type);
    });

    it('depends on the error type only, not on retryable or content', () => {
      const withContent: CallEnvelope = { ok: false, error: { type: 'TOOL_ERROR', message: 'no', retryable: true }, content: [{ type: 'text', text: 'details' }], meta };
      assert.equal(exitCodeFor(withContent), 3);
    });
  });

  describe('byteLength', () => {
    it('measures the UTF-8 bytes of the JSON text', () => {
      assert.equal(byteLength({ a: 1 }), 7); // {"a":1}
      assert.equal(byteLength('abc'), 5); // "abc"
      assert.equal(byteLength(null), 4);
      assert.equal(byteLength([]), 2);
    });

    it('counts multi-byte characters by their UTF-8 size', () => {
      assert.equal(byteLength('é'), 4); // 2 quotes + 2 bytes
      assert.equal(byteLength('€'), 5);
      assert.equal(byteLength('😀'), 6);
    });

    it('counts JSON escapes', () => {
      assert.equal(byteLength('"'), 4); // "\""
      assert.equal(byteLength('\n'), 4); // "\n"
      assert.equal(byteLength('\u0001'), 8); // "\u0001"
    });

    it('returns 0 for values JSON cannot represent', () => {
      assert.equal(byteLength(undefined), 0);
      assert.equal(byteLength(() => 1), 0);
      assert.equal(byteLength(10n), 0);
      const cyclic: Record<string, unknown> = {};
      cyclic['self'] = cyclic;
      assert.equal(byteLength(cyclic), 0);
    });
  });
});
