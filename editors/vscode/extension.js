// The client: starts `strata lsp` on stdio. The server implements the "Show SQL"
// code lens's command (`strata.renderSql`, answered through workspace/executeCommand)
// so every editor gets the SQL; this extension only displays what the server returns,
// in a side editor.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

const RENDER = "strata.renderSql";
let client;

async function showSql(result) {
  const doc = await vscode.workspace.openTextDocument({
    language: "sql", content: (result && result.sql) || `-- ${result ? result.error : "no answer"}`,
  });
  vscode.window.showTextDocument(doc, vscode.ViewColumn.Beside);
}

function activate(context) {
  const config = vscode.workspace.getConfiguration("strata");
  const command = config.get("path") || "strata";
  client = new LanguageClient("strata", "Strata",
    { command, args: ["lsp"] },
    {
      documentSelector: [{ scheme: "file", language: "strata" }],
      initializationOptions: {
        module: config.get("module") || undefined,
        debounce_ms: config.get("debounceMs"),
      },
      middleware: {
        // the lens (and the palette command below) run the server's command; its
        // answer is displayed here, with the dialect the settings choose
        executeCommand: async (name, args, next) => {
          const dialect = config.get("dialect");
          const sent = name === RENDER && args.length === 2 && dialect ? [...args, dialect] : args;
          const result = await next(name, sent);
          if (name === RENDER) await showSql(result);
          return result;
        },
      },
    });
  context.subscriptions.push(vscode.commands.registerCommand("strata.showSql", async () => {
    const editor = vscode.window.activeTextEditor;
    if (!editor) return;
    await vscode.commands.executeCommand(RENDER, editor.document.uri.toString(),
      editor.selection.active.line);
  }));
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
