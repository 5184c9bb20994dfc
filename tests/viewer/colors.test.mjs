// The colour-rank comparator and the colours it gives: a total order over (file, name,
// original index), never a spliced string, and colours that depend on the profile alone.
import test from 'node:test';
import assert from 'node:assert/strict';
import C from '../../web/colors.js';

const fr = (file, name, index) => ({file, name, index});

test('equal only for the same frame', () => {
    const a = fr('/w/x.c', 'f', 3), same = fr('/w/x.c', 'f', 3), twin = fr('/w/x.c', 'f', 4);
    assert.equal(C.compareFrames(a, same), 0);
    assert.ok(C.compareFrames(a, twin) < 0);
    assert.ok(C.compareFrames(twin, a) > 0);
    // Frames without a file (runtime frames) that share a name stay apart too.
    assert.notEqual(C.compareFrames(fr('', '??', 0), fr('', '??', 1)), 0);
});

test('the pair is compared field by field, not as one spliced string', () => {
    const a = fr('/w/a b.osp', 'z', 0), b = fr('/w/a', 'b.osp z', 1);
    assert.notEqual(C.compareFrames(a, b), 0);
    // File first: "/w/a" is a prefix of "/w/a b.osp", so b sorts first whatever the index.
    assert.ok(C.compareFrames(b, a) < 0);
    assert.ok(C.compareFrames(fr('/w/a', 'b.osp z', 9), fr('/w/a b.osp', 'z', 0)) < 0);
    assert.notEqual(C.rankFrames([{file: '/w/a b.osp', name: 'z'}, {file: '/w/a', name: 'b.osp z'}])[0],
                    C.rankFrames([{file: '/w/a b.osp', name: 'z'}, {file: '/w/a', name: 'b.osp z'}])[1]);
});

test('a total order: antisymmetric and transitive over a mixed set', () => {
    const files = ['', '/a', '/a b', '/b', 'Z', 'a'], names = ['', 'f', 'f g', 'g', 'F'];
    const all = [];
    let i = 0;
    for (const f of files) for (const n of names) for (let k = 0; k < 2; k++) all.push(fr(f, n, i++));
    for (const x of all)
        for (const y of all) {
            const c = C.compareFrames(x, y);
            assert.equal(Math.sign(c) + Math.sign(C.compareFrames(y, x)), 0);
            assert.equal(c === 0, x.index === y.index);
            for (const z of all.slice(0, 12))
                if (c < 0 && C.compareFrames(y, z) < 0) assert.ok(C.compareFrames(x, z) < 0);
        }
});

test('ranks follow file, then name, then index; code-unit order, not locale', () => {
    const frames = [{file: 'b.c', name: 'a'}, {file: 'a.c', name: 'z'}, {file: 'a.c', name: 'Z'},
                    {file: 'a.c', name: 'z'}];
    assert.deepEqual(Array.from(C.rankFrames(frames)), [3, 1, 0, 2]);
});

test('the same profile with its frames in another order gets the same colours', () => {
    const frames = [];
    for (let i = 0; i < 60; i++) frames.push({file: '/w/f' + (i % 7) + '.c', name: 'fn' + (i % 23), line: i});
    frames.push({file: '', name: '??', line: 0}, {file: '', name: '??', line: 0});
    const colours = C.frameColors(frames);
    const byKey = new Map(frames.map((f, i) => [f.file + '\0' + f.name + '\0' + f.line, colours[i]]));
    // Several permutations, including the reverse.
    const perms = [frames.slice().reverse()];
    let s = 7;
    for (let r = 0; r < 5; r++) {
        const p = frames.slice();
        for (let i = p.length - 1; i > 0; i--) {
            s = (s * 16807) % 2147483647;
            const j = s % (i + 1);
            [p[i], p[j]] = [p[j], p[i]];
        }
        perms.push(p);
    }
    for (const p of perms) {
        const c2 = C.frameColors(p);
        p.forEach((f, i) => assert.equal(c2[i], byKey.get(f.file + '\0' + f.name + '\0' + f.line)));
    }
    // And the colours are not all one: distinct functions get distinct ramp entries.
    assert.ok(new Set(colours).size >= 10);
    colours.forEach((c) => assert.ok(C.RAMP.includes(c)));
});
