// Flame-graph layout from stacks: widths, positions, order, hit testing, time order.
import test from 'node:test';
import assert from 'node:assert/strict';
import L from '../../web/layout.js';
import P from '../../web/profile.js';
import {cpuData, bigData} from './fixtures.mjs';

const name = (p, lay, v) => (lay.frame[v] < 0 ? '(root)' : p.frames[lay.frame[v]].name);

test('left heavy: merged tree, widest first, children inside their parent', () => {
    const p = P.decode(cpuData());
    const sw = P.stackWeights(p, {type: 0, state: 'both', thread: -1});
    assert.equal(sw.total, 150);
    const rank = Int32Array.from(p.frames.keys());
    const lay = L.leftHeavy(p.stacks, sw.w, sw.cnt, rank);
    assert.equal(lay.width, 150);
    // Depth 1: main (90) before worker (60).
    assert.deepEqual(Array.from(lay.rows[1], (v) => [name(p, lay, v), lay.x[v], lay.total[v]]),
                     [['main', 0, 90], ['worker', 90, 60]]);
    // Depth 2: work(80) <img>(10) under main; read(30)/hot_loop(30) tie broken by rank.
    assert.deepEqual(Array.from(lay.rows[2], (v) => [name(p, lay, v), lay.x[v], lay.total[v]]),
                     [['work', 0, 80], ['<img src=x onerror=alert(1)>', 80, 10], ['hot_loop', 90, 30], ['read', 120, 30]]);
    assert.deepEqual(Array.from(lay.rows[3], (v) => [name(p, lay, v), lay.x[v], lay.self[v]]),
                     [['hot_loop', 0, 60], ['cold_path', 60, 20]]);
    for (let v = 1; v < lay.n; v++) {
        const u = lay.parent[v];
        assert.ok(lay.x[v] >= lay.x[u] && lay.x[v] + lay.total[v] <= lay.x[u] + lay.total[u] + 1e-9);
    }
    // Hit testing.
    assert.equal(name(p, lay, L.hit(lay, 3, 59.5)), 'hot_loop');
    assert.equal(name(p, lay, L.hit(lay, 3, 60)), 'cold_path');
    assert.equal(L.hit(lay, 3, 85), -1);
    assert.equal(L.hit(lay, 9, 1), -1);
    assert.deepEqual(L.path(lay, L.hit(lay, 3, 1)).map((v) => name(p, lay, v)), ['(root)', 'main', 'work', 'hot_loop']);
});

test('selection: state and thread filters change the weights', () => {
    const p = P.decode(cpuData());
    assert.equal(P.stackWeights(p, {type: 0, state: 'wait', thread: -1}).total, 30);
    assert.equal(P.stackWeights(p, {type: 0, state: 'cpu', thread: -1}).total, 120);
    assert.equal(P.stackWeights(p, {type: 0, state: 'both', thread: 1}).total, 60);
    // cpu nanoseconds: waiting samples carry none.
    assert.equal(P.stackWeights(p, {type: 1, state: 'both', thread: -1}).total, 120e6);
});

test('time order: runs of consecutive samples per thread', () => {
    const p = P.decode(cpuData());
    const sel = {type: 0, state: 'both', thread: -1};
    const order = P.timeOrder(p, sel);
    const lay = L.timeOrder(p.stacks, order, p.samples.stack, p.samples.thread, p.samples.values[0], null);
    // Depth 0: one box per thread.
    assert.deepEqual(Array.from(lay.rows[0], (v) => [lay.thread[v], lay.x[v], lay.total[v]]), [[0, 0, 90], [1, 90, 60]]);
    // Thread 0: main spans its 90 samples; work 80; then hot_loop 60, cold_path 20 in time order.
    assert.deepEqual(Array.from(lay.rows[1], (v) => [name(p, lay, v), lay.x[v], lay.total[v]]),
                     [['main', 0, 90], ['worker', 90, 60]]);
    assert.deepEqual(Array.from(lay.rows[3], (v) => [name(p, lay, v), lay.x[v], lay.total[v]]),
                     [['hot_loop', 0, 60], ['cold_path', 60, 20]]);
    // Worker: 30 read then 30 hot_loop, in that order (time order, not widest first).
    assert.deepEqual(Array.from(lay.rows[2].slice(-2), (v) => [name(p, lay, v), lay.x[v]]), [['read', 90], ['hot_loop', 120]]);
});

test('time order splits a stack that comes back after another', () => {
    const stacks = [Int32Array.of(0, 1), Int32Array.of(0, 2)];
    const stackOf = Int32Array.of(0, 1, 0), threadOf = Int32Array.of(0, 0, 0), w = Float64Array.of(1, 1, 1);
    const lay = L.timeOrder(stacks, Int32Array.of(0, 1, 2), stackOf, threadOf, w, null);
    assert.equal(lay.rows[1].length, 1); // frame 0 stays one run
    assert.deepEqual(Array.from(lay.rows[2], (v) => [lay.frame[v], lay.x[v]]), [[1, 0], [2, 1], [1, 2]]);
});

test('50,000 distinct stacks: every box inside its parent, rows sorted by x', () => {
    const p = P.decode(bigData(50000));
    const sw = P.stackWeights(p, {type: 0, state: 'both', thread: -1});
    const lay = L.leftHeavy(p.stacks, sw.w, sw.cnt, Int32Array.from(p.frames.keys()));
    assert.equal(lay.width, sw.total);
    for (const row of lay.rows)
        for (let k = 1; k < row.length; k++) assert.ok(lay.x[row[k]] >= lay.x[row[k - 1]] + lay.total[row[k - 1]] - 1e-6);
    let selfSum = 0;
    for (let v = 0; v < lay.n; v++) selfSum += lay.self[v];
    assert.equal(selfSum, sw.total);
});
