import assert from 'node:assert/strict';
import {
  HONEST_ANSWER_OPENING,
  HallucinationGuardTurn,
  MAX_HALLUCINATION_RETRIES,
  RETRY_MAX_TEMPERATURE,
  claimsAction,
  decideAfterTurn,
  honestAnswer,
} from '../../../src/core/guards/hallucinationGuard';

/** Answers that claim an action, with the phrase expected to be found. */
const CLAIMS: ReadonlyArray<readonly [answer: string, phrase: string]> = [
  ["I've sent the email to Bob.", "I've sent"],
  ['I’ve saved the changes to config.json.', "I've saved"],
  ['I have created the issue.', 'I have created'],
  ['We have just published the post.', 'We have just published'],
  ["I've scheduled the meeting for 3pm tomorrow.", "I've scheduled"],
  ["I've booked a table for two at 7pm.", "I've booked"],
  ['I have now moved the file to /archive.', 'I have now moved'],
  ['I just sent the invite to the team.', 'I just sent'],
  ['I deleted the branch feature/login.', 'I deleted'],
  ['I set up the webhook for the repo.', 'I set up'],
  ["I've updated the README.", "I've updated"],
  ['The event has been scheduled for Monday.', 'has been scheduled'],
  ['Your reminder has been set for 9am.', 'has been set'],
  ['The files have been uploaded to the shared drive.', 'have been uploaded'],
  ['Your order has been placed and paid.', 'has been placed'],
  ["It's been deleted.", "'s been deleted"],
  ['The issue was successfully created as #42.', 'was successfully created'],
  ['I can confirm the email has been sent.', 'has been sent'],
  ['Done! I added the meeting.', 'Done!'],
  ['Done. The PR is merged.', 'Done.'],
  ['All done: the ticket is closed.', 'All done:'],
  ['All set! Your meeting is on the calendar.', 'All set!'],
  ['I went ahead and deleted them.', 'I went ahead and'],
  ["I've gone ahead and archived the old emails.", "I've gone ahead and"],
  ['Successfully deleted 3 files.', 'Successfully deleted'],
  ['Successfully updated the README.', 'Successfully updated'],
  ['Email sent to bob@example.com.', 'Email sent'],
  ['Event created for Monday', 'Event created'],
  ['Issue #42 created.', 'Issue #42 created'],
  ['Meeting rescheduled to Friday.', 'Meeting rescheduled'],
  ["Here's the email I sent to Bob:", 'I sent'],
  ['I searched for flights to Paris and found three.', 'I searched for'],
  ['I looked up your calendar and you are free at 3.', 'I looked up'],
  ['I checked your inbox: no new emails from Alice.', 'I checked your'],
  ["Sure! I've created the event.", "I've created"],
  ["No problem — I've sent it.", "I've sent"],
  ["I couldn't find it, so I've created a new one.", "I've created"],
  ["I've created the issue — would you like me to assign it?", "I've created"],
  ['**Done!** The file is saved.', 'Done!'],
  ["- I've posted the update to #general.", "I've posted"],
];

/** Plans, offers, questions, conditionals, negations, instructions, general knowledge, presented content. */
const NOT_CLAIMS: readonly string[] = [
  'I can send the email now.',
  'I can help you create the event.',
  'I could create a branch for this.',
  'I will create the issue.',
  "I'll create the issue as soon as you confirm.",
  "I'm going to send the email now.",
  'If you want, I will create it.',
  'Would you like me to create the event?',
  'Shall I book the table?',
  'Do you want me to delete these files?',
  'Has the meeting been scheduled?',
  'Maybe the file has been moved?',
  "Let me know if you'd like me to schedule it.",
  "I haven't sent anything yet.",
  "I didn't delete anything.",
  'I have not created the event because the calendar tool is unavailable.',
  "I wasn't able to send the email.",
  'Your account has not been charged.',
  'Nothing has been deleted.',
  'I would have sent it, but the tool failed.',
  "I'm unable to confirm whether it has been sent.",
  'Once it has been deployed, restart the service.',
  'If the file has been deleted, restore it from the trash.',
  'After the invite has been sent, the attendees get a notification.',
  'You should check that the backup has been saved.',
  'Make sure the file has been saved.',
  'You mentioned the invoice has been sent.',
  'To send an email, call the send_email tool with the recipient.',
  'Sending an email requires the SMTP server to be configured.',
  'Emails sent by the app use SMTP.',
  'The files changed in this commit are listed below.',
  'React has been updated many times since 2013.',
  'TypeScript 5.0 has been released.',
  "Here's the function I wrote:",
  'Here is a function I wrote for you:',
  "I've written a script that does this:",
  "I've updated the function below.",
  'I created a helper below that parses the file.',
  'The changes have been made in the code below:',
  "I've been thinking about your request.",
  'I have a question: should I send it?',
  "I'd recommend creating a new branch.",
  'Set the variable to 5 before running.',
  "> I've sent the report",
  '```\n// the file has been saved\nawait save();\n```',
  'Use `git commit` once the file has been saved.',
  "I've refactored the loop so it exits early:\n```ts\nfor (const x of xs) if (x) break;\n```",
  '',
];

describe('hallucination guard', () => {
  describe('claimsAction', () => {
    it('has a table of at least 40 phrasings', () => {
      assert.ok(CLAIMS.length + NOT_CLAIMS.length >= 40);
      assert.ok(CLAIMS.length >= 20 && NOT_CLAIMS.length >= 20);
    });

    for (const [answer, phrase] of CLAIMS) {
      it(`claims: ${JSON.stringify(answer)}`, () => {
        const claim = claimsAction(answer);
        assert.equal(claim.claimed, true);
        assert.equal(claim.phrase, phrase);
        assert.ok(claim.sentence && claim.sentence.length > 0);
      });
    }

    for (const answer of NOT_CLAIMS) {
      it(`does not claim: ${JSON.stringify(answer)}`, () => {
        assert.deepEqual(claimsAction(answer), { claimed: false });
      });
    }

    it('finds a claim anywhere in a longer answer, and quotes its clause', () => {
      const answer = "Sure, here is what happened.\n\n1. I looked at the request.\n2. I've archived the 12 old newsletters.\n\nLet me know if you need anything else.";
      assert.deepEqual(claimsAction(answer), { claimed: true, phrase: "I've archived", sentence: "I've archived the 12 old newsletters." });
    });

    it('cuts a long claimed sentence for quoting', () => {
      const claim = claimsAction(`I've sent the email to ${'a very long list of people, '.repeat(20)}and Bob.`);
      assert.equal(claim.claimed, true);
      assert.ok(claim.sentence!.length <= 160);
      assert.ok(claim.sentence!.endsWith('…'));
    });

    it('reads a negation only before the claim, so a later "not" does not hide it', () => {
      assert.equal(claimsAction("I've deleted the file, not the folder.").claimed, true);
    });
  });

  describe('decideAfterTurn', () => {
    const claim = "I've sent the email to Bob.";

    it('accepts an answer when tools were called, whatever it claims', () => {
      const d = decideAfterTurn({ toolCallsMade: 1, answer: claim, retried: false });
      assert.equal(d.action, 'accept');
      assert.equal(d.claim.claimed, true);
      assert.equal(d.honestAnswer, undefined);
    });

    it('accepts an answer without tools that claims nothing', () => {
      assert.equal(decideAfterTurn({ toolCallsMade: 0, answer: 'Paris is the capital of France.', retried: false }).action, 'accept');
    });

    it('retries once with required tools when no tool was called but an action is claimed', () => {
      const d = decideAfterTurn({ toolCallsMade: 0, answer: claim, retried: false });
      assert.equal(d.action, 'retry-with-required-tools');
      assert.equal(d.claim.phrase, "I've sent");
      assert.match(d.reason, /no tool was called but the answer claims an action \("I've sent"\)/);
    });

    it('stands aside when no tools were offered, since none could be required', () => {
      assert.equal(decideAfterTurn({ toolCallsMade: 0, answer: claim, retried: false, toolsOffered: 0 }).action, 'accept');
    });

    it('accepts a retry that called a tool', () => {
      assert.equal(decideAfterTurn({ toolCallsMade: 2, answer: claim, retried: true }).action, 'accept');
    });

    it('replaces a retry that called no tool, with an honest answer quoting the first claim', () => {
      const first = claimsAction(claim);
      const d = decideAfterTurn({ toolCallsMade: 0, answer: 'Email sent.', retried: true }, first);
      assert.equal(d.action, 'replace-with-honest-answer');
      assert.ok(d.honestAnswer!.startsWith(HONEST_ANSWER_OPENING));
      assert.match(d.honestAnswer!, /my first answer said "I've sent the email to Bob\."/);
    });

    it('replaces a retry that called no tool even when the retry claims nothing (the user may have seen the first claim)', () => {
      const d = decideAfterTurn({ toolCallsMade: 0, answer: 'Here is a draft of the email.', retried: true }, claimsAction(claim));
      assert.equal(d.action, 'replace-with-honest-answer');
    });

    it('replaces the answer when the retry itself failed', () => {
      const d = decideAfterTurn({ toolCallsMade: 0, answer: '', retried: true, retryFailed: true }, claimsAction(claim));
      assert.equal(d.action, 'replace-with-honest-answer');
      assert.match(d.reason, /failed/);
    });
  });

  describe('HallucinationGuardTurn', () => {
    it('goes first attempt → retry → honest answer, remembering the first claim', () => {
      const guard = new HallucinationGuardTurn();
      assert.equal(guard.isRetry, false);
      assert.equal(guard.afterAttempt({ toolCallsMade: 0, answer: 'The event has been created for Monday.' }).action, 'retry-with-required-tools');
      assert.equal(guard.isRetry, true);
      const final = guard.afterAttempt({ toolCallsMade: 0, answer: 'OK.' });
      assert.equal(final.action, 'replace-with-honest-answer');
      assert.match(final.honestAnswer!, /"The event has been created for Monday\."/);
      // Decided: later calls in the turn do not retry again.
      assert.equal(guard.afterAttempt({ toolCallsMade: 0, answer: 'Email sent.' }).action, 'accept');
    });

    it('stands aside for a request that offered no tools', () => {
      const guard = new HallucinationGuardTurn();
      assert.equal(guard.afterAttempt({ toolCallsMade: 0, answer: 'Email sent.', toolsOffered: 0 }).action, 'accept');
      assert.equal(guard.isRetry, false);
    });

    it('accepts the retry when it calls a tool', () => {
      const guard = new HallucinationGuardTurn();
      guard.afterAttempt({ toolCallsMade: 0, answer: 'Email sent.' });
      assert.equal(guard.afterAttempt({ toolCallsMade: 1, answer: 'Email sent.' }).action, 'accept');
    });

    it('accepts a first answer that needs no retry, and then stays decided', () => {
      const guard = new HallucinationGuardTurn();
      assert.equal(guard.afterAttempt({ toolCallsMade: 0, answer: 'Would you like me to send it?' }).action, 'accept');
      assert.equal(guard.isRetry, false);
      assert.equal(guard.afterAttempt({ toolCallsMade: 0, answer: 'Email sent.' }).action, 'accept');
    });
  });

  describe('honestAnswer and defaults', () => {
    it('says nothing was done and how to go on, without a quote when there is no claim', () => {
      const text = honestAnswer();
      assert.ok(text.startsWith("I wasn't able to complete this action."));
      assert.match(text, /No tool was called, so nothing was sent, created, changed or looked up\./);
      assert.match(text, /Tool Router: Call Tool…/);
      assert.doesNotMatch(text, /first answer/);
    });

    it('keeps the seed defaults', () => {
      assert.equal(RETRY_MAX_TEMPERATURE, 0.3);
      assert.equal(MAX_HALLUCINATION_RETRIES, 1);
    });
  });
});
