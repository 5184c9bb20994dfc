// Heat follows edits (src/linemap.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { shiftLines, countNewlines } = require('../out/linemap.js');

const heat = [{ line: 4, t: 'a' }, { line: 10, t: 'b' }];

test('a line inserted above moves the heat down with its line', () => {
    assert.deepEqual(shiftLines(heat, { startLine: 2, endLine: 2, addedLines: 1 }), [{ line: 5, t: 'a' }, { line: 11, t: 'b' }]);
});

test('lines inserted between two hot lines move only the lower one', () => {
    assert.deepEqual(shiftLines(heat, { startLine: 6, endLine: 6, addedLines: 3 }), [{ line: 4, t: 'a' }, { line: 13, t: 'b' }]);
});

test('typing within a hot line keeps its heat where it is', () => {
    assert.equal(shiftLines(heat, { startLine: 4, endLine: 4, addedLines: 0 }), heat);
});

test('deleting lines drops the heat of the deleted ones and moves the rest up', () => {
    // Lines 3..5 joined into line 3: line 4 is gone, line 10 becomes 8.
    assert.deepEqual(shiftLines(heat, { startLine: 3, endLine: 5, addedLines: 0 }), [{ line: 8, t: 'b' }]);
});

test('newlines are counted in the inserted text', () => {
    assert.equal(countNewlines('a\nb\n'), 2);
    assert.equal(countNewlines(''), 0);
});
