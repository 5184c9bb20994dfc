// Which kestrel runs, and which file a path of the profile is (src/paths.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { resolveKestrel, resolveSource, samePath } = require('../out/paths.js');

const fsOf = (...files) => (p) => files.includes(p);

test('the kestrel.path setting wins, and must exist', () => {
    const ex = fsOf('/opt/k/bin/kestrel', '/usr/bin/kestrel');
    assert.deepEqual(resolveKestrel('/opt/k/bin/kestrel', '/usr/bin', [], ex), { path: '/opt/k/bin/kestrel' });
    assert.match(resolveKestrel('/nope/kestrel', '/usr/bin', [], ex).error, /kestrel\.path is \/nope\/kestrel, which does not exist/);
    assert.deepEqual(resolveKestrel('build/bin/kestrel', '', ['/ws'], fsOf('/ws/build/bin/kestrel')), { path: '/ws/build/bin/kestrel' });
});

test('without the setting: kestrel on PATH, then the workspace build', () => {
    assert.deepEqual(resolveKestrel('', '/a:/usr/bin', ['/ws'], fsOf('/usr/bin/kestrel', '/ws/build/bin/kestrel')), { path: '/usr/bin/kestrel' });
    assert.deepEqual(resolveKestrel('', '/a:/usr/bin', ['/x', '/ws'], fsOf('/ws/build/bin/kestrel')), { path: '/ws/build/bin/kestrel' });
    assert.match(resolveKestrel('', '/a', ['/ws'], fsOf()).error, /no kestrel: not on PATH, not in build\/bin of the workspace/);
});

test('an absolute source path that exists is itself', () => {
    assert.equal(resolveSource('/ws/src/../src/busy.c', { folders: ['/ws'] }, fsOf('/ws/src/busy.c')), '/ws/src/busy.c');
});

test('a relative path is taken from the profile folder, then the workspace folders', () => {
    const ex = fsOf('/prof/a.c', '/ws/lib/b.c');
    assert.equal(resolveSource('a.c', { profileDir: '/prof', folders: ['/ws'] }, ex), '/prof/a.c');
    assert.equal(resolveSource('lib/b.c', { profileDir: '/prof', folders: ['/ws'] }, ex), '/ws/lib/b.c');
});

test('a path from another machine finds the workspace file with the longest common tail', () => {
    const candidates = ['/ws/tests/util.c', '/ws/src/net/util.c'];
    assert.equal(resolveSource('/build/home/x/src/net/util.c', { folders: ['/ws'], candidates }, fsOf()), '/ws/src/net/util.c');
});

test('a file that is nowhere (libc sources) resolves to nothing', () => {
    assert.equal(resolveSource('./time/../sysdeps/unix/sysv/linux/clock_nanosleep.c', { folders: ['/ws'] }, fsOf()), null);
    assert.equal(resolveSource('', { folders: [] }, fsOf()), null);
});

test('samePath compares normalized paths', () => {
    assert.ok(samePath('/ws/./busy.c', '/ws/busy.c'));
    assert.ok(!samePath('/ws/busy.c', '/ws/other.c'));
    assert.ok(samePath('src/busy.c', '/ws/src/busy.c'));
});
