/**
 * JSON with object keys sorted at every level, so equal data gives equal text whatever the key order.
 * Iterative, so a deeply nested schema cannot overflow the stack; throws on a cycle (only an in-process
 * object can have one: JSON from a server cannot).
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const onPath = new Set<object>();
  type Step = { readonly value: unknown } | { readonly text: string } | { readonly leave: object };
  const stack: Step[] = [{ value }];
  const jsonValue = (v: unknown): unknown => (v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v);
  while (stack.length > 0) {
    const step = stack.pop()!;
    if ('text' in step) {
      out.push(step.text);
      continue;
    }
    if ('leave' in step) {
      onPath.delete(step.leave);
      continue;
    }
    const v = step.value;
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(jsonValue(v)) ?? 'null');
      continue;
    }
    if (onPath.has(v)) throw new TypeError('the definition refers to itself (a cycle), so it cannot be read as JSON');
    onPath.add(v);
    const steps: Step[] = [];
    if (Array.isArray(v)) {
      steps.push({ text: '[' });
      v.forEach((item: unknown, i) => {
        if (i > 0) steps.push({ text: ',' });
        steps.push({ value: jsonValue(item) });
      });
      steps.push({ text: ']' });
    } else {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).filter((k) => record[k] !== undefined && typeof record[k] !== 'function' && typeof record[k] !== 'symbol').sort();
      steps.push({ text: '{' });
      keys.forEach((k, i) => {
        steps.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(k)}:` });
        steps.push({ value: record[k] });
      });
      steps.push({ text: '}' });
    }
    steps.push({ leave: v });
    for (let i = steps.length - 1; i >= 0; i--) stack.push(steps[i]!);
  }
  return out.join('');
}
