import { claimsAction } from '../guards/hallucinationGuard';

/**
 * The answer as the model writes it, with the claimed-action guard in front of it.
 *
 * The guard can only judge a step once it has ended (did the model call a tool, or only say it did?), yet
 * the user should read the answer as it is written. So text goes out a sentence at a time, and only the
 * sentences that could be a false claim wait: while no tool has run in the turn, a finished sentence that
 * claims an action ("I've sent the invite.") is held, with everything after it in that step. When the
 * step ends, held text goes out if the step called a tool or the guard accepts the answer; it is dropped
 * if the guard asks the model again or replaces the answer with an honest one. Once a tool has run in
 * the turn, the guard has nothing more to judge and text goes out as it comes.
 */

/** A sentence ends at . ! ? or a line break, followed by white space (or a line break itself). */
const SENTENCE_END = /[.!?](?=\s)|\n/g;

export class AnswerStream {
  /** This step's text not yet sent: an unfinished sentence, or everything from a held claim on. */
  private pending = '';
  private holding = false;
  private guarding = true;
  private sentAny = false;
  /** A new step's first text is set apart from the previous step's. */
  private needsBreak = false;

  constructor(private readonly emit: (text: string) => void) {}

  /** Whether any text has reached the user. */
  get started(): boolean {
    return this.sentAny;
  }

  /** A piece of the current step's text, as the model produced it. */
  write(delta: string): void {
    if (!delta) return;
    if (!this.guarding) return this.send(delta);
    this.pending += delta;
    if (this.holding) return;
    let cut = 0;
    SENTENCE_END.lastIndex = 0;
    for (let m = SENTENCE_END.exec(this.pending); m; m = SENTENCE_END.exec(this.pending)) cut = m.index + m[0].length;
    if (cut === 0) return;
    const finished = this.pending.slice(0, cut);
    if (claimsAction(finished).claimed) {
      // Sentences before the claim are safe to show; the claim and what follows wait for the step's end.
      let safe = 0;
      SENTENCE_END.lastIndex = 0;
      for (let m = SENTENCE_END.exec(finished); m; m = SENTENCE_END.exec(finished)) {
        const end = m.index + m[0].length;
        if (claimsAction(finished.slice(0, end)).claimed) break;
        safe = end;
      }
      this.send(this.pending.slice(0, safe));
      this.pending = this.pending.slice(safe);
      this.holding = true;
      return;
    }
    this.send(finished);
    this.pending = this.pending.slice(cut);
  }

  /** A model step begins. */
  beginStep(): void {
    this.needsBreak = this.sentAny;
  }

  /** The step ended; `release` sends what waited (a tool was called, or the guard accepted), otherwise it is dropped. */
  endStep(release: boolean): void {
    if (release) this.send(this.pending);
    this.pending = '';
    this.holding = false;
  }

  /** A tool ran: from now on nothing can be a false claim in this turn. */
  stopGuarding(): void {
    this.guarding = false;
  }

  /** Text the router adds itself (an honest answer, a notice), sent at once. */
  say(text: string): void {
    this.needsBreak = this.sentAny;
    this.send(text);
  }

  private send(text: string): void {
    if (!text) return;
    this.emit(this.needsBreak ? `\n\n${text}` : text);
    this.needsBreak = false;
    this.sentAny = true;
  }
}
