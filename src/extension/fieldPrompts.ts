import * as vscode from 'vscode';
import { parseFieldValue, type FormField } from '../core/schema/schemaForms';

/**
 * One field of a form, asked in VS Code's quick input: enums and booleans as picks (the default first and
 * marked), multiple choice as a multi-select pick, everything else as an input box checked as you type.
 * Call Tool's argument forms and servers' elicitation forms both ask through this.
 */

export const CANCELLED = Symbol('cancelled');
export const SKIPPED = Symbol('skipped');
export type FieldAnswer = { value: unknown } | typeof CANCELLED | typeof SKIPPED;

export interface FieldPromptOptions {
  /** The value given before (shown again after a failed check). */
  readonly previous?: unknown;
  /** Why the previous value was refused. */
  readonly error?: string;
  readonly token?: vscode.CancellationToken;
}

export async function askField(title: string, field: FormField, options: FieldPromptOptions = {}): Promise<FieldAnswer> {
  const hint = [field.description, field.required ? vscode.l10n.t('required') : vscode.l10n.t('optional: leave empty to skip')].filter(Boolean).join(' · ');
  const placeHolder = options.error ? `⚠ ${options.error}` : hint;
  const label = (o: unknown): string => {
    const i = field.options?.indexOf(o) ?? -1;
    return i >= 0 && field.labels?.[i] ? field.labels[i]! : String(o);
  };
  if (field.kind === 'enum' || field.kind === 'boolean') {
    const values = field.kind === 'boolean' ? [true, false] : (field.options ?? []);
    // The default first, so that pressing Enter takes it.
    const ordered = field.defaultValue !== undefined && values.includes(field.defaultValue) ? [field.defaultValue, ...values.filter((o) => o !== field.defaultValue)] : values;
    const items: Array<vscode.QuickPickItem & { value?: unknown; skip?: boolean }> = ordered.map((o) => ({
      label: label(o),
      ...(o === field.defaultValue ? { description: vscode.l10n.t('default') } : label(o) !== String(o) ? { description: String(o) } : {}),
      value: o,
    }));
    if (!field.required) items.push({ label: vscode.l10n.t('(leave out)'), skip: true });
    const pick = await vscode.window.showQuickPick(items, { title, placeHolder, ignoreFocusOut: true }, options.token);
    if (!pick) return CANCELLED;
    return pick.skip ? SKIPPED : { value: pick.value };
  }
  if (field.kind === 'multi') {
    const chosen = new Set(Array.isArray(options.previous) ? options.previous : Array.isArray(field.defaultValue) ? field.defaultValue : []);
    const items = (field.options ?? []).map((o) => ({ label: label(o), value: o, picked: chosen.has(o) }));
    const picks = await vscode.window.showQuickPick(items, { title, placeHolder, canPickMany: true, ignoreFocusOut: true }, options.token);
    if (!picks) return CANCELLED;
    return picks.length === 0 && !field.required ? SKIPPED : { value: picks.map((p) => p.value) };
  }
  const initial = options.previous !== undefined ? String(options.previous) : field.defaultValue !== undefined ? String(field.defaultValue) : '';
  const text = await vscode.window.showInputBox(
    {
      title,
      prompt: placeHolder,
      value: initial,
      placeHolder: field.kind,
      ignoreFocusOut: true,
      validateInput: (value) => {
        if (value === '' && !field.required) return undefined;
        const parsed = parseFieldValue(field, value);
        return typeof parsed === 'string' ? parsed : undefined;
      },
    },
    options.token,
  );
  if (text === undefined) return CANCELLED;
  if (text === '' && !field.required) return SKIPPED;
  const parsed = parseFieldValue(field, text);
  return typeof parsed === 'string' ? { value: text } : parsed;
}
