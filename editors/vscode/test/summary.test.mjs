// profile.json -> the heat of the lines and the status bar (src/summary.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { parseSummary, heatForFile, hotFiles, statusText, tooSmall, heatText } = require('../out/summary.js');

const share = (samples, n, significant = true) => {
    const p = samples / n;
    return { value: samples, samples, share: p, se: Math.sqrt((p * (1 - p)) / n), significant };
};
// The shape docs/exports.md gives, with 1000 samples over two files.
function profile(lines, n = 1000) {
    return JSON.stringify({
        format: 'kestrel-summary', version: 1, source: 'x.raw.json', kind: 'cpu',
        sample_type: { type: 'samples', unit: 'count' },
        totals: { value: n, samples: n, wall_ns: 2e9, rate_hz: 997, requested_hz: 997, period: 1003009, threads: 2, dropped: 0, truncated: 0, engine: 'perf' },
        states: { running: share(773, n), waiting: share(227, n) },
        threads: [], stacks: { known: true }, functions: [],
        lines: lines.map(([fn, file, line, self]) => ({ function: fn, file, line, self: share(self, n, self > 40), total: share(self, n) })),
    });
}

test('the hot lines of one file become 0-based decorations with share and samples', () => {
    const s = parseSummary(profile([['hot_loop', '/src/busy.c', 18, 577], ['cold_path', '/src/busy.c', 24, 175], ['other', '/src/other.c', 3, 90]]));
    const h = heatForFile(s, (f) => f === '/src/busy.c');
    assert.deepEqual(h.map((x) => x.line), [17, 23]);
    assert.equal(h[0].text, '57.7% · 577 samples');
    assert.equal(h[1].text, '17.5% · 175 samples');
    assert.match(h[0].hover, /57\.7% ±1\.6 self of samples \(577 of 1000 samples\) in hot_loop/);
});

test('two functions on one line add up', () => {
    const s = parseSummary(profile([['a', '/s.c', 5, 100], ['b', '/s.c', 5, 50]]));
    const h = heatForFile(s, () => true);
    assert.equal(h.length, 1);
    assert.equal(h[0].samples, 150);
    assert.equal(h[0].text, '15.0% · 150 samples');
    assert.match(h[0].hover, /in a, b$/);
});

test('the standard error is shown where it is large relative to the share', () => {
    const s = parseSummary(profile([['rare', '/s.c', 9, 3], ['hot', '/s.c', 10, 500]]));
    const [rare, hot] = heatForFile(s, () => true);
    assert.equal(rare.text, '0.3% ±0.2 · 3 samples');
    assert.equal(hot.text, '50.0% · 500 samples');
    assert.equal(heatText({ value: 1, samples: 1, share: 0.5, se: 0.5, significant: false }, 'count'), '50.0% ±50.0 · 1 sample');
});

test('lines without a file or without self samples are not decorated', () => {
    const s = parseSummary(profile([[null, null, 0, 100], ['f', '/s.c', 0, 10], ['g', '/s.c', 7, 0]]));
    assert.deepEqual(heatForFile(s, () => true), []);
    assert.deepEqual(hotFiles(s), ['/s.c']);
});

test('hot files come hottest first', () => {
    const s = parseSummary(profile([['a', '/a.c', 1, 10], ['b', '/b.c', 1, 300], ['a2', '/a.c', 2, 20]]));
    assert.deepEqual(hotFiles(s), ['/b.c', '/a.c']);
});

test('the status bar says samples, rate and running share', () => {
    assert.equal(statusText(parseSummary(profile([]))), 'kestrel: 1000 samples · 997 Hz · running 77.3%');
});

test('a profile of few samples is too small to trust, with the reason', () => {
    assert.equal(tooSmall(parseSummary(profile([], 1000))), null);
    assert.match(tooSmall(parseSummary(profile([], 12))), /12 samples, too few to trust \(at least 100\)/);
});

test('what is not a kestrel profile.json is refused with the reason', () => {
    assert.throws(() => parseSummary('{'), /not JSON/);
    assert.throws(() => parseSummary('{"format": "speedscope"}'), /not a kestrel profile\.json/);
    assert.throws(() => parseSummary('{"format": "kestrel-summary", "version": 2}'), /version 2/);
});
