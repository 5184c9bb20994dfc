// No script of the page turns a string into markup: profile strings reach the document
// through textContent and the canvas only (the browser test checks the behaviour).
import test from 'node:test';
import assert from 'node:assert/strict';
import {readdirSync, readFileSync} from 'node:fs';

test('web/*.js never parses strings as HTML or code', () => {
    const files = readdirSync('web').filter((f) => f.endsWith('.js'));
    assert.ok(files.length >= 8);
    for (const f of files) {
        const src = readFileSync('web/' + f, 'utf8');
        for (const bad of ['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'document.write', 'eval(', 'new Function'])
            assert.ok(!src.includes(bad), f + ' uses ' + bad);
    }
});
