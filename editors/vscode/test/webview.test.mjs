// The webview's page from web/viewer.html (src/webview.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { webviewPage, dataOfViewerPage } = require('../out/webview.js');

const template = readFileSync(new URL('../../../web/viewer.html', import.meta.url), 'utf8');
const page = webviewPage(template, {
    cspSource: 'https://file+.vscode-resource.test', uri: (f) => 'https://file+.vscode-resource.test/media/web/' + f,
    hostScript: 'https://file+.vscode-resource.test/media/host.js', data: '{"version":1,"title":"\\u003c/script\\u003e"}',
});

test('the CSP allows only the extension resources: no inline script or style', () => {
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page)[1];
    assert.equal(csp, "default-src 'none'; script-src https://file+.vscode-resource.test; style-src https://file+.vscode-resource.test; img-src https://file+.vscode-resource.test data:");
    assert.doesNotMatch(page, /unsafe-inline/);
    assert.equal((page.match(/http-equiv="Content-Security-Policy"/g) || []).length, 1);
});

test('every script of web/viewer.html loads from the extension, after the host script', () => {
    const srcs = [...page.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1]);
    const named = [...template.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => 'https://file+.vscode-resource.test/media/web/' + m[1]);
    assert.deepEqual(srcs, ['https://file+.vscode-resource.test/media/host.js', ...named]);
    assert.ok(named.length >= 8);
    // The only script element without src is the JSON data block, which does not run.
    const inline = [...page.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((m) => m[1]);
    assert.deepEqual(inline, [' id="kestrel-data" type="application/json"']);
    assert.match(page, /<link rel="stylesheet" href="https:\/\/file\+\.vscode-resource\.test\/media\/web\/viewer\.css">/);
});

test('the data goes where the placeholder was, and reads back', () => {
    assert.doesNotMatch(page, /@KESTREL_DATA@/);
    assert.equal(dataOfViewerPage(page), '{"version":1,"title":"\\u003c/script\\u003e"}');
});

test('data that would close its element, or a page without data, is refused', () => {
    assert.throws(() => webviewPage(template, { cspSource: 'x', uri: (f) => f, hostScript: 'h', data: '"</script>"' }), /close its element/);
    assert.throws(() => dataOfViewerPage('<html></html>'), /not a kestrel viewer page/);
    assert.throws(() => webviewPage('<html></html>', { cspSource: 'x', uri: (f) => f, hostScript: 'h', data: '{}' }), /changed shape/);
});

test('the scripts the page names are the ones the build copies from web/', () => {
    const web = readdirSync(new URL('../../../web/', import.meta.url));
    for (const m of template.matchAll(/<script src="([^"]+)"><\/script>/g)) assert.ok(web.includes(m[1]), m[1]);
});
