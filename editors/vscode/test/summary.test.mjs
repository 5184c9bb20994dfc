// profile.json -> the heat of the lines and the status bar (src/summary.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { parseSummary, heatForFile, hotFiles, statusText, tooSmall, heatText, events, bytes } = require('../out/summary.js');

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

// A heap profile.json as kestrel writes it: 3 stacks, 96 MiB in use at 512 KiB a sample.
function heapProfile(value = 96 * 1048576, stacks = 3, lines = []) {
    const sh = (v) => ({ value: v, samples: 1, share: v / value, se: 0, significant: true });
    return JSON.stringify({
        format: 'kestrel-summary', version: 1, source: 'x.heap.pb.gz', kind: 'heap',
        sample_type: { type: 'inuse_space', unit: 'bytes' },
        totals: { value, samples: stacks, wall_ns: 1e9, rate_hz: 0, requested_hz: 0, period: 524288, threads: 1, dropped: 0, truncated: 0, engine: null },
        threads: [], stacks: { known: true }, functions: [],
        lines: lines.map(([fn, file, line, v]) => ({ function: fn, file, line, self: sh(v), total: sh(v) })),
    });
}

test('a heap profile counts its sampled allocations, not its stacks', () => {
    const s = parseSummary(heapProfile());
    assert.equal(events(s), 192);
    assert.equal(tooSmall(s), null);
    assert.equal(statusText(s), 'kestrel: heap inuse_space 96.0 MiB · about 192 sampled allocations');
    assert.match(tooSmall(parseSummary(heapProfile(10 * 524288))), /^the heap profile has about 10 sampled allocations, too few to trust \(at least 100\)/);
    // Never fewer events than stacks.
    assert.equal(events(parseSummary(heapProfile(1024, 7))), 7);
});

test("a heap line's share and error rest on the sampled allocations; its bytes are shown", () => {
    const s = parseSummary(heapProfile(96 * 1048576, 3, [['grow', '/s.c', 8, 72 * 1048576], ['small', '/s.c', 9, 24 * 1048576]]));
    const [grow, small] = heatForFile(s, () => true);
    assert.equal(grow.samples, 1);
    assert.ok(Math.abs(grow.se - Math.sqrt(0.75 * 0.25 / 192)) < 1e-12, String(grow.se));
    assert.equal(grow.text, '75.0% · 72.0 MiB');
    assert.equal(small.text, '25.0% · 24.0 MiB');
    assert.match(grow.hover, /75\.0% ±3\.1 self of inuse_space \(1 of 3 stacks\) in grow/);
});

test('bytes are written in binary units', () => {
    assert.deepEqual([0, 1023, 1536, 96 * 1048576, 5 * 1024 ** 3].map(bytes), ['0 B', '1023 B', '1.50 KiB', '96.0 MiB', '5.00 GiB']);
});
