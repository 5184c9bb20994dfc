// Self/total per function (recursion once), standard errors, line heat, search share.
import test from 'node:test';
import assert from 'node:assert/strict';
import P from '../../web/profile.js';
import S from '../../web/stats.js';
import Q from '../../web/search.js';
import {cpuData} from './fixtures.mjs';

const all = {type: 0, state: 'both', thread: -1};

test('self and total with standard errors', () => {
    const p = P.decode(cpuData());
    const fns = S.functions(p.frames), sw = P.stackWeights(p, all);
    const rows = S.hotFunctions(p, fns, sw, true);
    const hot = rows.find((r) => r.name === 'hot_loop');
    assert.equal(hot.self, 90);
    assert.equal(hot.total, 90);
    assert.equal(hot.selfShare, 0.6);
    assert.ok(Math.abs(hot.selfSE - Math.sqrt(0.6 * 0.4 / 150)) < 1e-12);
    const main = rows.find((r) => r.name === 'main');
    assert.equal(main.self, 0);
    assert.equal(main.total, 90);
    assert.deepEqual(S.sortRows(rows, 'self', true).slice(0, 3).map((r) => r.name), ['hot_loop', 'read', 'cold_path']);
    assert.deepEqual(S.sortRows(rows, 'total', true)[0].name, 'hot_loop');
    assert.equal(S.sortRows(rows, 'name', false)[0].name, '<img src=x onerror=alert(1)>');
    // Heap-like selections carry no errors.
    assert.ok(Number.isNaN(S.hotFunctions(p, fns, sw, false)[0].selfSE));
});

test('recursion is counted once in total', () => {
    const p = P.decode({
        version: 1, sample_types: [{name: 'samples', unit: 'count'}],
        frames: [['fib', '/f.c', 3], ['fib', '/f.c', 4], ['main', '/f.c', 9]],
        stacks: [[2, 0, 1, 0, 1]], samples: {stack: [0, 0], values: [[1, 1]]},
    });
    const fns = S.functions(p.frames);
    assert.equal(fns.list.length, 2); // the two fib frames are one function
    const rows = S.hotFunctions(p, fns, P.stackWeights(p, all), true);
    assert.equal(rows.find((r) => r.name === 'fib').total, 2);
    assert.equal(rows.find((r) => r.name === 'fib').self, 2);
});

test('line heat: once per stack through the line', () => {
    const p = P.decode(cpuData());
    const heat = S.lineHeat(p, P.stackWeights(p, all), '/w/demo.c');
    assert.deepEqual(heat.get(12), {w: 90, n: 90, share: 0.6});
    assert.deepEqual(heat.get(40), {w: 90, n: 90, share: 0.6});
    assert.equal(heat.get(20).n, 20);
    assert.equal(heat.has(1), false);
});

test('search: case-insensitive substring, share of the stacks that match', () => {
    const p = P.decode(cpuData());
    const sw = P.stackWeights(p, all);
    assert.equal(Q.matchFrames(p.frames, ''), null);
    const m = Q.matchFrames(p.frames, 'HOT');
    assert.deepEqual(Array.from(m), [0, 0, 1, 0, 0, 0, 0]);
    assert.deepEqual(Q.matchShare(p.stacks, sw.w, sw.total, m), {weight: 90, share: 0.6});
    const none = Q.matchFrames(p.frames, 'nothing');
    assert.equal(Q.matchShare(p.stacks, sw.w, sw.total, none).share, 0);
});

test('bad data is refused with a message', () => {
    assert.throws(() => P.decode({version: 2}), /version/);
    assert.throws(() => P.decode({version: 1, sample_types: [{name: 's', unit: 'count'}], frames: [['a', '', 0]],
                                  stacks: [[3]], samples: {stack: [0], values: [[1]]}}), /frame 3/);
    assert.throws(() => P.decode({version: 1, sample_types: [{name: 's', unit: 'count'}], frames: [],
                                  stacks: [], samples: {stack: [5], values: [[1]]}}), /stack/);
});
