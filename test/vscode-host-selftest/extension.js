// @ts-check
/* eslint-disable @typescript-eslint/no-require-imports -- the extension host loads extensions and extensionTestsPath with require(), and provides `vscode` only to require() */
/** Throwaway extension for scripts/vscode-host/selftest.sh: one command, nothing else. */
const vscode = require('vscode');

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('vscodeHostSelftest.greet', (/** @type {string | undefined} */ name) => {
      // Returned for the mocha suite; shown as a notification when run from the palette,
      // where ui-smoke.mjs looks for it.
      const greeting = `hello ${name ?? 'from the command palette'}`;
      if (name === undefined) void vscode.window.showInformationMessage(greeting);
      return greeting;
    }),
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
