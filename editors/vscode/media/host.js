/* Runs in the webview before the viewer's scripts: the viewer (web/app.js) calls
 * window.kestrelHost.openSource when a frame is clicked, and the extension opens the
 * file at the line. */
(function () {
    'use strict';
    const vscode = acquireVsCodeApi();
    const violations = [];
    window.kestrelHost = {
        openSource(file, line) { vscode.postMessage({ type: 'openSource', file, line }); },
        violations,
    };
    /* What the page's Content-Security-Policy refused: a viewer that needs more than the
     * extension's own files would break here, so it is said in the output channel. */
    document.addEventListener('securitypolicyviolation', (e) => {
        const what = e.violatedDirective + ' ' + (e.blockedURI || 'inline');
        violations.push(what);
        vscode.postMessage({ type: 'cspViolation', what });
    });
})();
