/**
 * The reliability suite: fault, bad-input, secret and cache cases against real server processes.
 * Prints one row per class (cases, passed, lost calls, crashes) and ends with one JSON line of totals;
 * exits 1 if any case failed. Every input tried counts as a case (the fuzzer's 10,000 argument objects
 * are 10,000 cases); `checks` is the number of case programs that ran. Run with `npm run test:reliability`.
 */
import { badInputCases } from './badInputCases';
import { cacheCases, secretCases } from './cacheAndSecretCases';
import { faultCases, type ReliabilityCase } from './faultCases';
import { takeOverCases } from './takeOverCases';
import { argumentLimitCases } from './argumentLimitCases';
import { gatewayLimitCases } from './gatewayLimitCases';
import { type CaseResult, crashMessages, installCrashCounters, lostByGroup, setGroup, totals } from './reliabilityHarness';

/** A case that has not ended by then is failed, so one stuck case cannot hang the suite. */
const CASE_TIMEOUT_MS = 120_000;

const groups: Array<[string, ReliabilityCase[]]> = [
  ['faults', faultCases],
  ['bad input', badInputCases],
  ['secrets', secretCases],
  ['caches', cacheCases],
  ['take-over files', takeOverCases],
  ['argument limits', argumentLimitCases],
  ['gateway limits', gatewayLimitCases],
];

async function main(): Promise<void> {
  installCrashCounters();
  const only = process.argv[2];
  const results: CaseResult[] = [];
  const crashesByGroup = new Map<string, number>();
  for (const [group, cases] of groups) {
    if (only && group !== only) continue;
    setGroup(group);
    console.log(`${group}:`);
    const crashesBefore = totals.crashes;
    for (const c of cases) {
      const started = Date.now();
      let detail: string | undefined;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          c.run(),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`did not end within ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
          }),
        ]);
      } catch (error) {
        detail = error instanceof Error ? error.message : String(error);
      } finally {
        clearTimeout(timer);
      }
      results.push({ group, name: c.name, inputs: c.inputs ?? 1, passed: detail === undefined, ...(detail ? { detail } : {}) });
      console.log(`  ${detail === undefined ? 'ok  ' : 'FAIL'} ${c.name} (${Date.now() - started} ms)${detail ? `\n       ${detail}` : ''}`);
    }
    crashesByGroup.set(group, totals.crashes - crashesBefore);
  }
  const rows = [...new Set(results.map((r) => r.group))].map((group) => {
    const rs = results.filter((r) => r.group === group);
    return { group, cases: sum(rs.map((r) => r.inputs)), passed: sum(rs.filter((r) => r.passed).map((r) => r.inputs)), lost: lostByGroup.get(group) ?? 0, crashes: crashesByGroup.get(group) ?? 0 };
  });
  console.log('');
  console.log(`| ${'class'.padEnd(10)} | cases | passed | lost calls | crashes |`);
  console.log(`| ${'-'.repeat(10)} | ----- | ------ | ---------- | ------- |`);
  for (const r of rows) console.log(`| ${r.group.padEnd(10)} | ${String(r.cases).padStart(5)} | ${String(r.passed).padStart(6)} | ${String(r.lost).padStart(10)} | ${String(r.crashes).padStart(7)} |`);
  for (const m of crashMessages) console.log(`crash: ${m}`);
  const cases = sum(results.map((r) => r.inputs));
  const passed = sum(results.filter((r) => r.passed).map((r) => r.inputs));
  console.log(JSON.stringify({ cases, passed, checks: results.length, lost_calls: totals.lostCalls, crashes: totals.crashes }));
  process.exit(passed === cases && totals.lostCalls === 0 && totals.crashes === 0 ? 0 : 1);
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

void main();
