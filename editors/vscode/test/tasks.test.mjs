// A workspace task as the program Record Command… records (src/tasks.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { taskProgram, substituteVars, shellSyntax } = require('../out/tasks.js');

const vars = { workspaceFolder: '/ws/app', userHome: '/home/u', env: { DATA: '/data', EMPTY: '' } };

test('a process task: its program and arguments as they are, run in the workspace folder', () => {
    assert.deepEqual(taskProgram('bench', { kind: 'process', command: '${workspaceFolder}/build/app', args: ['--n', '3 4', '$HOME|x'] }, vars),
        { argv: ['/ws/app/build/app', '--n', '3 4', '$HOME|x'], cwd: '/ws/app', env: {} });
});

test("a task's folder and environment, with their variables filled in", () => {
    const p = taskProgram('t', { kind: 'process', command: './app', args: ['${env:DATA}/in.txt'], cwd: 'build', env: { IN: '${userHome}/x', N: '2' } }, vars);
    assert.deepEqual(p, { argv: ['./app', '/data/in.txt'], cwd: '/ws/app/build', env: { IN: '/home/u/x', N: '2' } });
    assert.equal(taskProgram('t', { kind: 'process', command: 'a', args: [], cwd: '${workspaceFolder}/sub' }, vars).cwd, '/ws/app/sub');
    assert.equal(substituteVars('${workspaceFolderBasename}:${env:NOPE}:${pathSeparator}', vars, 't'), 'app::/');
});

test('a variable Record Command… cannot fill in is an error naming the task and the variable', () => {
    assert.throws(() => taskProgram('run it', { kind: 'process', command: '${file}', args: [] }, vars),
        /task "run it" uses \$\{file\}, which Record Command… does not fill in/);
    assert.throws(() => substituteVars('--x=${input:size}', vars, 'b'), /\$\{input:size\}/);
});

test('a shell task of plain words is split as a typed command line', () => {
    assert.deepEqual(taskProgram('s', { kind: 'shell', command: './app --name "a b" ${workspaceFolder}/in', args: [] }, vars).argv,
        ['./app', '--name', 'a b', '/ws/app/in']);
    // With args, the command is the program and each arg one word, as VS Code quotes them.
    assert.deepEqual(taskProgram('s', { kind: 'shell', command: './app', args: ['a b', 'x|y'] }, vars).argv, ['./app', 'a b', 'x|y']);
});

test('a shell task that needs a shell is refused with what needs it', () => {
    assert.throws(() => taskProgram('pipe', { kind: 'shell', command: './app | tee out', args: [] }, vars),
        /task "pipe" needs a shell \(\| in \.\/app \| tee out\); kestrel records one program: make it a "process" task, or type the command line/);
    assert.throws(() => taskProgram('and', { kind: 'shell', command: 'make && ./app', args: [] }, vars), /needs a shell \(&/);
    assert.throws(() => taskProgram('home', { kind: 'shell', command: './app $HOME', args: [] }, vars), /needs a shell \(\$/);
    assert.throws(() => taskProgram('none', { kind: 'shell', command: '  ', args: [] }, vars), /task "none" runs no program/);
});

test('what a shell gives a meaning to, outside quotes only', () => {
    assert.equal(shellSyntax('./app -n 3 --out=a~b'), null);
    assert.equal(shellSyntax(`./app 'a|b' "c;d" e\\>f`), null);
    assert.equal(shellSyntax('./app > out'), '>');
    assert.equal(shellSyntax('./app "$X"'), '$');
    assert.equal(shellSyntax('./app ~/in'), '~');
    assert.equal(shellSyntax('./app *.txt'), '*');
});
