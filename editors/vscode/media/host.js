/* Runs in the webview before the viewer's scripts: the viewer (web/app.js) calls
 * window.kestrelHost.openSource when a frame is clicked, and the extension opens the
 * file at the line. */
(function () {
    'use strict';
    const vscode = acquireVsCodeApi();
    window.kestrelHost = {
        openSource(file, line) { vscode.postMessage({ type: 'openSource', file, line }); },
    };
})();
