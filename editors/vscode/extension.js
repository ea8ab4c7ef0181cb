// The client: starts `strata lsp` on stdio and shows a model's SQL in a side editor.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

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
    });
  context.subscriptions.push(vscode.commands.registerCommand("strata.showSql", async (uri, line) => {
    const editor = vscode.window.activeTextEditor;
    const target = uri || (editor && editor.document.uri.toString());
    const at = line !== undefined ? line : (editor ? editor.selection.active.line : 0);
    const result = await client.sendRequest("workspace/executeCommand", {
      command: "strata.renderSql", arguments: [target, at, config.get("dialect")],
    });
    const doc = await vscode.workspace.openTextDocument({
      language: "sql", content: result.sql || `-- ${result.error}`,
    });
    vscode.window.showTextDocument(doc, vscode.ViewColumn.Beside);
  }));
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
