import { randomUUID } from 'node:crypto';
import {
  inputRequired,
  inputResponse,
  type CallToolResult,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type InputRequest,
  type InputRequiredResult,
  type InputResponses,
} from '@modelcontextprotocol/server';
import type { CallerFeatures } from '../connection/clientFeatures';
import type { CallOptions } from '../router/toolRouter';
import { describeError } from '../errors/describeError';
import { errorResult } from './gatewayTools';

/**
 * Calls of 2026-07-28 gateway clients that wait for their client's answer. A routed server may ask a question
 * (elicitation) or for a model reply (sampling) in the middle of a call, on either revision. A 2026-07-28
 * client has no session to push that request on: the call's answer is `input_required` with the question,
 * and the client retries the call with its answer. Between the two requests the call is parked here, with
 * the server's request still open; the retry hands the answer to it and waits for the next question or the
 * result.
 *
 * A parked call lives in this process only, so a retry must come back to it (one gateway, or affinity behind
 * a proxy). One left unanswered for the expiry is cancelled: the server's question is answered `cancel` (or
 * the sampling request fails) and the call is aborted.
 */

/** At most this many calls wait for answers at once; a call beyond it gets the host's own handlers. */
export const MAX_PARKED_CALLS = 32;

/** What the retry's sealed state says about the parked call it answers. */
export interface ParkedCallState {
  readonly kind: 'call';
  readonly id: string;
  /** Which round of questions the retry answers: an older one was answered already. */
  readonly round: number;
  /** The gateway tool called, and a digest of its arguments: the retry must be the same call. */
  readonly tool: string;
  readonly args: string;
}

/** The routed server's progress for a call, passed on to the request that waits on it now. */
export type ProgressRelay = NonNullable<CallOptions['onProgress']>;

/** What a parked call returns to its client next: the result, or questions and the state to send back. */
export type NextAnswer =
  | { readonly kind: 'result'; readonly result: CallToolResult | InputRequiredResult }
  | { readonly kind: 'questions'; readonly inputRequests: Record<string, InputRequest>; readonly state: ParkedCallState };

type Question =
  | { readonly type: 'elicit'; readonly request: InputRequest; readonly settle: (answer: ElicitResult) => void; readonly fail: (error: Error) => void }
  | { readonly type: 'sample'; readonly request: InputRequest; readonly settle: (answer: CreateMessageResult) => void; readonly fail: (error: Error) => void };

class ParkedCall {
  readonly id = randomUUID();
  readonly controller = new AbortController();
  round = 0;
  /** Questions the server asked that the client has not yet been sent (key → question). */
  private readonly unsent = new Map<string, Question>();
  /** Questions sent in the current round, waiting for the retry. */
  private readonly sent = new Map<string, Question>();
  private counter = 0;
  private wake?: () => void;
  private outcome?: CallToolResult | InputRequiredResult;
  expiry?: NodeJS.Timeout;
  /** Where the server's progress goes: the request waiting on the call now (none between two requests). */
  progress?: ProgressRelay | undefined;

  constructor(
    readonly tool: string,
    readonly args: string,
  ) {}

  settle(result: CallToolResult | InputRequiredResult): void {
    this.outcome = result;
    this.wake?.();
  }

  /** The features this call's routed server reaches: its questions are parked for the client. */
  features(can: { elicit: boolean; sample: boolean }): CallerFeatures {
    return {
      ...(can.elicit ? { elicit: (params: ElicitRequest['params'], signal: AbortSignal) => this.askElicit(params, signal) } : {}),
      ...(can.sample ? { sample: (params: CreateMessageRequest['params'], signal: AbortSignal) => this.askSample(params, signal) } : {}),
    };
  }

  /** Waits for the result or for questions; takes what arrived. */
  async next(state: Omit<ParkedCallState, 'kind' | 'id' | 'round'>): Promise<NextAnswer> {
    if (this.outcome === undefined && this.unsent.size === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    if (this.outcome !== undefined) return { kind: 'result', result: this.outcome };
    this.round += 1;
    const inputRequests: Record<string, InputRequest> = {};
    for (const [key, question] of this.unsent) {
      inputRequests[key] = question.request;
      this.sent.set(key, question);
    }
    this.unsent.clear();
    return { kind: 'questions', inputRequests, state: { kind: 'call', id: this.id, round: this.round, ...state } };
  }

  /** Hands the retry's answers to the questions they answer; a question left unanswered is asked again. */
  answer(responses: InputResponses | Record<string, unknown> | undefined): void {
    for (const [key, question] of this.sent) {
      const view = inputResponse(responses, key);
      if (view.kind === 'missing') {
        this.unsent.set(key, question);
      } else if (question.type === 'elicit') {
        if (view.kind === 'elicit') question.settle({ action: view.action, ...(view.content ? { content: view.content as ElicitResult['content'] } : {}) });
        else question.fail(new Error('the client answered the question with something other than an elicitation result'));
      } else if (view.kind === 'sampling') {
        question.settle(view.result as CreateMessageResult);
      } else {
        question.fail(new Error('the client answered the sampling request with something other than a message'));
      }
    }
    this.sent.clear();
  }

  /** Ends the wait: open questions are cancelled and the call is aborted. */
  cancel(reason: string): void {
    for (const question of [...this.sent.values(), ...this.unsent.values()]) {
      if (question.type === 'elicit') question.settle({ action: 'cancel' });
      else question.fail(new Error(reason));
    }
    this.sent.clear();
    this.unsent.clear();
    this.controller.abort(new Error(reason));
  }

  private askElicit(params: ElicitRequest['params'], signal: AbortSignal): Promise<ElicitResult> {
    // A URL-mode question would send the client's user to a page the server chose: not passed on.
    if ('mode' in params && params.mode === 'url') return Promise.resolve({ action: 'decline' });
    return new Promise((settle, fail) => this.park({ type: 'elicit', request: inputRequired.elicit(params as Parameters<typeof inputRequired.elicit>[0]), settle, fail }, signal));
  }

  private askSample(params: CreateMessageRequest['params'], signal: AbortSignal): Promise<CreateMessageResult> {
    return new Promise((settle, fail) => this.park({ type: 'sample', request: inputRequired.createMessage(params), settle, fail }, signal));
  }

  private park(question: Question, signal: AbortSignal): void {
    const key = `q${++this.counter}`;
    this.unsent.set(key, question);
    // The server withdrew its request (it gave up or the call ended): the question is dropped.
    signal.addEventListener('abort', () => this.unsent.delete(key) || this.sent.delete(key), { once: true });
    this.wake?.();
  }
}

/** The parked calls of one gateway process. */
export class SuspendedCalls {
  private readonly calls = new Map<string, ParkedCall>();

  constructor(private readonly expiryMs: number) {}

  get size(): number {
    return this.calls.size;
  }

  /**
   * Starts a call whose routed server may ask its client questions. `run` gets the features to pass as the
   * call's caller and the signal that aborts it; with the table full it gets no features (the host answers).
   */
  async start(
    key: { tool: string; args: string },
    can: { elicit: boolean; sample: boolean },
    signal: AbortSignal,
    run: (caller: CallerFeatures, signal: AbortSignal, onProgress?: ProgressRelay) => Promise<CallToolResult | InputRequiredResult>,
    onProgress?: ProgressRelay,
  ): Promise<NextAnswer> {
    if ((!can.elicit && !can.sample) || this.calls.size >= MAX_PARKED_CALLS) return { kind: 'result', result: await run({}, signal, onProgress) };
    const call = new ParkedCall(key.tool, key.args);
    this.calls.set(call.id, call);
    call.progress = onProgress;
    run(call.features(can), call.controller.signal, (progress) => call.progress?.(progress)).then(
      (result) => call.settle(result),
      (error: unknown) => call.settle(errorResult(describeError(error))),
    );
    return this.next(call, signal, onProgress);
  }

  /** Answers a parked call from a retry whose sealed state names it; an ended or repeated one is refused. */
  async resume(state: ParkedCallState, key: { tool: string; args: string }, responses: InputResponses | Record<string, unknown> | undefined, signal: AbortSignal, onProgress?: ProgressRelay): Promise<NextAnswer> {
    const call = this.calls.get(state.id);
    if (!call) {
      return { kind: 'result', result: errorResult(`The call this answer belongs to has ended: it waited longer than ${Math.round(this.expiryMs / 1000)} s for the answer, or the gateway restarted. Call the tool again.`) };
    }
    if (call.tool !== key.tool || call.args !== key.args) return { kind: 'result', result: errorResult('The answer sent back was for another call. Call the tool again.') };
    if (state.round !== call.round) return { kind: 'result', result: errorResult('That answer was used already. Call the tool again to be asked again.') };
    clearTimeout(call.expiry);
    call.answer(responses);
    return this.next(call, signal, onProgress);
  }

  /** Ends every parked call (the gateway is closing). */
  dispose(): void {
    for (const call of this.calls.values()) {
      clearTimeout(call.expiry);
      call.cancel('the gateway closed');
    }
    this.calls.clear();
  }

  /** The call's next answer to the request waiting on it; the request given up (cancelled) cancels the call. */
  private async next(call: ParkedCall, signal: AbortSignal, onProgress?: ProgressRelay): Promise<NextAnswer> {
    const giveUp = (): void => {
      this.calls.delete(call.id);
      call.cancel('the client cancelled the call');
    };
    signal.addEventListener('abort', giveUp, { once: true });
    call.progress = onProgress;
    let answer: NextAnswer;
    try {
      answer = await call.next({ tool: call.tool, args: call.args });
    } finally {
      signal.removeEventListener('abort', giveUp);
      call.progress = undefined;
    }
    if (answer.kind === 'result') {
      this.calls.delete(call.id);
      return answer;
    }
    call.expiry = setTimeout(() => {
      this.calls.delete(call.id);
      call.cancel(`the client did not answer within ${Math.round(this.expiryMs / 1000)} s`);
    }, this.expiryMs);
    call.expiry.unref?.();
    return answer;
  }
}
