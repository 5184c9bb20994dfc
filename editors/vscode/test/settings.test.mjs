// The settings and the command lines they make (src/settings.ts, src/outcome.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { readSettings, runCommand, recordCommand, splitCommandLine, stemName, profileName, sourceLanguage } = require('../out/settings.js');
const { classify } = require('../out/outcome.js');

const of = (o) => (k) => o[k];

test('defaults: kestrel on PATH, 997 Hz, auto engine and unwinding, no heap, no flags', () => {
    assert.deepEqual(readSettings(of({})), { path: '', rate: 997, engine: 'auto', unwind: 'auto', heap: false, compilerFlags: [] });
});

test('a setting out of range is an error naming it', () => {
    assert.throws(() => readSettings(of({ rate: 5 })), /kestrel\.rate is 5/);
    assert.throws(() => readSettings(of({ rate: 99.5 })), /kestrel\.rate/);
    assert.throws(() => readSettings(of({ engine: 'dwarf' })), /kestrel\.engine is dwarf: one of auto, perf, signal/);
    assert.throws(() => readSettings(of({ unwind: 'dwarf' })), /kestrel\.unwind is dwarf: one of auto, cfi, fp/);
    assert.throws(() => readSettings(of({ compilerFlags: '-O1' })), /kestrel\.compilerFlags/);
});

test('kestrel run gets the rate, engine, unwinding, heap and stem; compiler flags go in $CFLAGS', () => {
    const s = readSettings(of({ rate: 1999, engine: 'signal', unwind: 'fp', heap: true, compilerFlags: ['-O1', '-DN=3'] }));
    assert.deepEqual(runCommand(s, '/ws/busy.c', '/tmp/k/busy'),
        { args: ['run', '-F', '1999', '--engine', 'signal', '--unwind', 'fp', '--heap', '-o', '/tmp/k/busy', '/ws/busy.c'], env: { CFLAGS: '-O1 -DN=3' } });
    assert.deepEqual(runCommand(readSettings(of({})), 'a.c', 'a').env, {});
});

test('kestrel record puts the program after --', () => {
    const s = readSettings(of({}));
    assert.deepEqual(recordCommand(s, ['./app', '-x'], '/tmp/app').args,
        ['record', '-F', '997', '--engine', 'auto', '--unwind', 'auto', '-o', '/tmp/app', '--', './app', '-x']);
    assert.throws(() => recordCommand(s, [], 'x'), /no program/);
});

test('a typed command line splits into words with quotes, no shell', () => {
    assert.deepEqual(splitCommandLine(`./app  --name "a b" 'c d' e\\ f $HOME`), ['./app', '--name', 'a b', 'c d', 'e f', '$HOME']);
    assert.deepEqual(splitCommandLine('x ""'), ['x', '']);
    assert.throws(() => splitCommandLine('x "open'), /unclosed "/);
});

test('the stem is the file or program base name', () => {
    assert.equal(stemName('/ws/src/busy.c'), 'busy');
    assert.equal(stemName('./build/app'), 'app');
});

// The stderr below is what kestrel run printed for each case on this machine.
test('a build error gives the compiler message', () => {
    const err = "bad.c:1:24: error: use of undeclared identifier 'x'\nint main(void){ return x; }\n                       ^\n1 error generated.\nkestrel: bad.c: compilation failed\n";
    const o = classify(1, null, err);
    assert.equal(o.kind, 'build');
    assert.equal(o.message, "the program does not compile: bad.c:1:24: error: use of undeclared identifier 'x'");
    assert.match(o.compilerOutput, /1 error generated\.$/);
});

test('no compiler, a crash, a failure and kestrel errors are told apart', () => {
    assert.match(classify(1, null, 'kestrel: nocc: No such file or directory\nkestrel: fail.c: compilation failed\n').message, /^no C compiler: nocc/);
    assert.deepEqual(classify(null, 'SIGABRT', 'kestrel: wrote /tmp/crash.*\n'), { kind: 'program', message: 'the program crashed (SIGABRT)', profiled: true });
    assert.deepEqual(classify(3, null, 'kestrel: wrote /tmp/fail.*\n'), { kind: 'program', message: 'the program exited with status 3', profiled: true });
    assert.deepEqual(classify(1, null, 'kestrel: out/p: directory out/ does not exist\n'), { kind: 'kestrel', message: 'out/p: directory out/ does not exist' });
    assert.deepEqual(classify(0, null, 'kestrel: wrote x.*\n'), { kind: 'ok' });
});

test('kestrel run of a C++ file: its compiler flags go in $CXXFLAGS', () => {
    const s = readSettings(of({ compilerFlags: ['-O1', '-std=c++20'] }));
    assert.deepEqual(runCommand(s, '/ws/hot.cpp', '/tmp/k/hot'),
        { args: ['run', '-F', '997', '--engine', 'auto', '--unwind', 'auto', '-o', '/tmp/k/hot', '/ws/hot.cpp'], env: { CXXFLAGS: '-O1 -std=c++20' } });
    for (const f of ['a.cc', 'a.cxx', 'a.C']) assert.deepEqual(runCommand(s, f, 'a').env, { CXXFLAGS: '-O1 -std=c++20' });
    assert.equal(sourceLanguage('x.h'), null);
    assert.throws(() => runCommand(s, '/ws/x.h', 'x'), /\/ws\/x\.h is not a C or C\+\+ file/);
});

test('a profile file is named after its run', () => {
    assert.equal(stemName('/ws/hot.cpp'), 'hot');
    assert.equal(stemName('/ws/Hot.C'), 'Hot');
    assert.equal(profileName('/tmp/runs/busy.raw/4242.raw.json'), 'busy.4242');
    assert.equal(profileName('/tmp/runs/busy.raw/4242.heap.pb.gz'), 'busy.4242.heap');
    assert.equal(profileName('/tmp/runs/busy.heap.pb.gz'), 'busy.heap');
    assert.equal(profileName('/tmp/runs/busy.pb.gz'), 'busy');
    assert.equal(profileName('/tmp/cpu.pb'), 'cpu');
    assert.equal(profileName('/tmp/x/4242.raw.json'), '4242');
    assert.equal(profileName('/tmp/.raw.json'), 'profile');
});
