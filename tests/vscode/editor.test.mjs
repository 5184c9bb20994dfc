// The packaged extension (build/editors/kestrel-profiler.vsix) installed into code-server
// and used as a user would: open a C file, run Kestrel: Profile Current File from the
// command palette, then look at the flame graph in the webview (hot_loop drawn, a hover
// tooltip, a click moving the editor to hot_loop's line), the heat after the hot lines
// and its moving with an edit, Clear Heat, Record Command… of a typed command line, and
// a file that does not compile giving a notification with the compiler's message; then
// Open Profile… of a raw profile, a CPU and a heap pprof and a profile.json, Record
// Command… of a workspace task, the notifications of a program that fails, crashes or
// runs too short and of a missing kestrel, a C++ file profiled from the editor's title
// bar, the viewer's controls inside the panel, and kestrel.heap turned on in the
// Settings editor. A wait that times out leaves a screenshot in build/test-logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from '../../web/node_modules/playwright-core/index.mjs';

const CS = process.env.CODE_SERVER_DIR;
const entry = join(CS, 'node_modules/code-server/out/node/entry.js');
const work = mkdtempSync('/tmp/kestrel-vscode-test-');
const ws = join(work, 'ws'), userData = join(work, 'user'), extDir = join(work, 'ext');
const KESTREL = resolve('build/bin/kestrel');
/* The kestrel.path setting names a link to it, which a test removes to see the
 * notification of a kestrel that is not there. */
const KESTREL_LINK = join(work, 'bin/kestrel');
let server, browser, page, serverLog = '';
const consoleErrors = [];

const freePort = () => new Promise((ok) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); }); });
const lineOf = (file, text) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;

async function until(what, f, ms = 60000) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await f().catch(() => null);
        if (v) return v;
        if (Date.now() > end) {
            const shot = 'build/test-logs/vscode-editor-timeout-' + what.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 50) + '.png';
            if (page) await page.screenshot({ path: shot }).catch(() => {});
            throw new Error('timed out waiting for ' + what + ' (' + shot + ')');
        }
        await new Promise((r) => setTimeout(r, 250));
    }
}

/* The programs of the tests below: WORK spins for about a fifth of a second of CPU (a
 * few hundred samples at 997 Hz) after heap_grow has kept 96 MiB, so that every
 * profile has enough samples; each one's WORK has a name of its own (-DWORK=NAME),
 * so that a graph with it drawn is that profile's and not the one before. NEED_ARG:
 * exit 4 unless the first argument is that; END: how main ends. */
/* A C++ template member, whose demangled name the graph shows. */
const ACC_CPP = `namespace work {
template <class T> struct Acc {
    volatile T sum = 0;
    __attribute__((noinline)) void add_all(long n)
    {
        for (long i = 0; i < n; i++)
            sum += T(i) * 0.5;
    }
};
}

int main()
{
    work::Acc<double> a;
    a.add_all(200000000);
    return 0;
}
`;

const WORK_C = `#include <stdlib.h>
#include <string.h>
static volatile double sink;
static char *kept[96];
__attribute__((noinline)) void heap_grow(void)
{
    for (int i = 0; i < 96; i++) {
        kept[i] = malloc(1 << 20);
        memset(kept[i], i, 4096);
    }
}
__attribute__((noinline)) void WORK(long n)
{
    for (long i = 0; i < n; i++)
        sink += i * 0.5;
}
int main(int argc, char **argv)
{
#ifdef NEED_ARG
    if (argc < 2 || strcmp(argv[1], NEED_ARG) != 0)
        return 4;
#endif
    (void)argc, (void)argv;
    heap_grow();
    WORK(200000000);
#ifdef END
    END;
#endif
    return 0;
}
`;

test.before(async () => {
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    mkdirSync(join(userData, 'User'), { recursive: true });
    mkdirSync(join(work, 'tmp'));
    copyFileSync('tests/vscode/hot.c', join(ws, 'hot.c'));
    writeFileSync(join(ws, 'bad.c'), 'int main(void)\n{\n    return undefined_thing;\n}\n');
    /* The files the tests open are there from the start: quick open may not offer a
     * file written later until its file search sees it. */
    writeFileSync(join(ws, 'endless.c'), 'int main(void)\n{\n    for (volatile unsigned long i = 0;; i++) {\n    }\n}\n');
    writeFileSync(join(ws, 'fails.c'), '#define WORK fail_work\n#define END return 3\n' + WORK_C);
    writeFileSync(join(ws, 'crashes.c'), '#define WORK crash_work\n#define END abort()\n' + WORK_C);
    writeFileSync(join(ws, 'short.c'), 'int main(void)\n{\n    for (volatile long i = 0; i < 3000000; i++) {\n    }\n    return 0;\n}\n');
    writeFileSync(join(ws, 'grows.c'), '#define WORK grow_work\n' + WORK_C);
    writeFileSync(join(ws, 'acc.cpp'), ACC_CPP);
    mkdirSync(join(work, 'bin'));
    symlinkSync(KESTREL, KESTREL_LINK);
    writeFileSync(join(ws, '.vscode/settings.json'), JSON.stringify({ 'kestrel.path': KESTREL_LINK }));
    /* The task Record Command… offers: a program that fails (exit 4) unless it gets
     * its argument, run in the workspace folder. */
    writeFileSync(join(ws, '.vscode/tasks.json'), JSON.stringify({ version: '2.0.0', tasks: [{
        label: 'work with an argument', type: 'process', command: '${workspaceFolder}/task-prog', args: ['from-task'],
        options: { cwd: '${workspaceFolder}' }, problemMatcher: [] }] }));
    writeFileSync(join(userData, 'User/settings.json'), JSON.stringify({
        'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off', 'extensions.autoCheckUpdates': false, 'workbench.tips.enabled': false,
        'extensions.ignoreRecommendations': true,
    }));
    const inst = spawnSync(process.execPath, [entry, '--user-data-dir', userData, '--extensions-dir', extDir,
        '--install-extension', resolve('build/editors/kestrel-profiler.vsix')], { encoding: 'utf8', timeout: 120000 });
    assert.equal(inst.status, 0, 'code-server --install-extension: ' + inst.stdout + inst.stderr);
    const port = await freePort();
    server = spawn(process.execPath, [entry, '--auth', 'none', '--bind-addr', '127.0.0.1:' + port, '--disable-telemetry',
        '--disable-update-check', '--disable-workspace-trust', '--user-data-dir', userData, '--extensions-dir', extDir, ws],
        /* Its own group, so that the workbench's children end with it; its own TMPDIR,
         * where the extension writes the runs' exports. */
        { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, TMPDIR: join(work, 'tmp') } });
    server.stdout.on('data', (b) => { serverLog += b; });
    server.stderr.on('data', (b) => { serverLog += b; });
    await until('code-server to listen', () => fetch('http://127.0.0.1:' + port + '/healthz').then((r) => r.ok));
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    /* The webview's frames too: a Content-Security-Policy refusal is logged here. */
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    await page.goto('http://127.0.0.1:' + port + '/?folder=' + encodeURIComponent(ws));
    await page.waitForSelector('.monaco-workbench', { timeout: 120000 });
    await page.waitForSelector('.explorer-folders-view, .explorer-viewlet', { timeout: 120000 }).catch(() => {});
});

test.after(async () => {
    if (browser) await browser.close();
    if (server) try { process.kill(-server.pid, 'SIGTERM'); } catch { /* gone */ }
    rmSync(work, { recursive: true, force: true });
});

/* Quick open, as a user opens a file: Control+P, the name, Enter on the focused row.
 * A row list that does not offer the file within 15 s (the file search still indexing,
 * the keys taken by a webview that had focus) is closed and asked again, at most four
 * times; the last failure says what the widget showed. */
async function openFile(name) {
    let shown = '';
    for (let attempt = 1; ; attempt++) {
        await page.keyboard.press('Control+P');
        await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
        await page.fill('.quick-input-widget input', name);
        /* Enter opens the focused row: wait until that is the file, not a recent one. */
        const offered = await until('quick open to offer ' + name, () => page.$$eval('.quick-input-list .monaco-list-row.focused',
            (rows, n) => rows.some((r) => r.textContent.includes(n)), name), 15000).catch(() => false);
        if (offered) break;
        shown = await page.evaluate(() => JSON.stringify({
            input: document.querySelector('.quick-input-widget input')?.value,
            rows: [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => (r.classList.contains('focused') ? '> ' : '') + r.textContent),
            focus: document.activeElement?.tagName + '.' + document.activeElement?.className,
        })).catch((e) => String(e));
        await page.keyboard.press('Escape');
        if (attempt === 4) throw new Error('quick open never offered ' + name + ': ' + shown);
    }
    await page.keyboard.press('Enter');
    /* The editor of that file has focus (there may be two groups: the flame graph's). */
    await until(name + ' focused in the editor', () => page.$$eval('.tabs-container .tab.active',
        (tabs, n) => tabs.some((t) => t.textContent.includes(n) && t.closest('.editor-group-container.active')), name));
}

async function runCommand(title) {
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible' });
    /* Filled in at once: typed key by key, the palette filters every command for each
     * key, which takes seconds under load. */
    await page.fill('.quick-input-widget input', '>' + title);
    await until('the command palette to offer ' + title, () => page.$$eval('.quick-input-list .monaco-list-row', (rows, t) =>
        rows.some((r) => r.textContent.includes(t)), title));
    await page.keyboard.press('Enter');
}

/* The webview's inner frame is the one that runs the viewer. */
const viewerFrame = () => until('the flame graph webview', async () => {
    for (const f of page.frames()) if (await f.evaluate(() => !!window.kestrelViewer).catch(() => false)) return f;
    return null;
}, 180000);

const cursorLine = () => page.$eval('.statusbar [id="status.editor.selection"]', (e) => e.textContent).then((t) => +/Ln (\d+)/.exec(t)[1]);

/* The after-line decorations the editor of hot.c shows: VS Code draws their text as
 * the ::after content of a span in the line, so it is read from the computed style.
 * The editor is the group whose open tab is FILE (the focused one if two are): a click
 * in the flame graph may leave the focus on the graph's group after the editor moved. */
const heatShown = (atLeast, file = 'hot.c') => page.evaluate(([n, name]) => {
    const out = [];
    const groups = [...document.querySelectorAll('.editor-group-container')].filter((g) => {
        const t = g.querySelector('.tabs-container .tab.active .label-name');
        return t && t.textContent.trim() === name;
    });
    const group = groups.find((g) => g.classList.contains('active')) || groups[0];
    if (!group) return null;
    for (const line of group.querySelectorAll('.editor-instance .view-line')) {
        for (const el of line.querySelectorAll('span')) {
            const c = getComputedStyle(el, '::after').content;
            if (c && /% · \d+ samples?/.test(c)) out.push({ code: line.textContent.replace(/\u00a0/g, ' '), heat: c, top: parseFloat(line.style.top) });
        }
    }
    return out.length >= n ? out : null;
}, [atLeast, file]);

test('Profile Current File: the flame graph, a tooltip, click-to-source, the heat of the hot lines', async () => {
    await openFile('hot.c');
    await runCommand('Kestrel: Profile Current File');
    const frame = await viewerFrame();
    const boxes = await until('hot_loop drawn', () => frame.evaluate(() => {
        const b = window.kestrelViewer.boxes('hot_loop');
        return b.length && b[0].w > 20 ? b : null;
    }));
    const b = boxes[0];
    // Drawn: hot_loop's box is coloured, unlike the empty canvas below the graph (the
    // viewer draws in the animation frame after its layout, so that is waited for).
    const drawn = () => frame.evaluate(({ x, y }) => {
        const c = document.getElementById('flame'), r = window.devicePixelRatio || 1, g = c.getContext('2d');
        const at = (u, v) => [...g.getImageData(Math.floor(u * r), Math.floor(v * r), 1, 1).data];
        return { box: at(x, y), empty: at(4, c.clientHeight - 4) };
    }, { x: b.x + 1.5, y: b.y + 1.5 });
    const px = await until('hot_loop coloured', async () => { const p = await drawn(); return p.box.join() !== p.empty.join() ? p : null; }, 30000);
    assert.notDeepEqual(px.box, px.empty, 'hot_loop box is drawn: ' + JSON.stringify(px));
    const cb = await frame.locator('#flame').boundingBox(); /* in page coordinates */
    const at = { x: cb.x + b.x + Math.min(b.w / 2, 40), y: cb.y + b.y + b.h / 2 };
    await page.mouse.move(at.x, at.y);
    const tip = await until('the tooltip', () => frame.$eval('#tooltip', (t) => (!t.hidden && t.textContent) || null));
    assert.match(tip, /hot_loop/);
    assert.match(tip, /±/);
    // Click-to-source: the editor moves to the line the viewer gives for hot_loop.
    await page.mouse.click(at.x, at.y);
    const loc = await until('the frame details', () => frame.$eval('#details .loc', (e) => e.textContent));
    const want = +/hot\.c:(\d+)$/.exec(loc)[1];
    const first = lineOf('tests/vscode/hot.c', 'static void hot_loop'), last = lineOf('tests/vscode/hot.c', 'sink += i * 0.5') + 1;
    assert.ok(want >= first && want <= last, 'the viewer puts hot_loop at hot.c:' + want);
    await until('the editor at hot.c:' + want, async () => (await cursorLine()) === want, 30000);
    // The heat: after-line decorations on the loop bodies, with share and samples.
    const heat = await until('heat decorations', () => heatShown(2));
    const hot = heat.find((h) => h.code.includes('sink += i * 0.5'));
    const cold = heat.find((h) => h.code.includes('sink -= i * 0.25'));
    assert.ok(hot && cold, 'heat on both loop bodies: ' + JSON.stringify(heat));
    const share = (h) => parseFloat(/([\d.]+)%/.exec(h.heat)[1]);
    assert.ok(share(hot) > share(cold), 'hot_loop hotter than cold_loop: ' + JSON.stringify(heat));
    // The viewer's own controls work inside the webview: Time Order redraws hot_loop,
    // a search dims what does not match; nothing was refused by the webview's CSP.
    await frame.selectOption('#view', 'time');
    await until('hot_loop in Time Order', () => frame.evaluate(() => window.kestrelViewer.boxes('hot_loop').length > 0));
    await frame.fill('#search', 'cold_loop');
    const match = await until('the search result', () => frame.$eval('#match', (e) => e.textContent || null));
    assert.match(match, /of the selection matches “cold_loop”/);
    const refused = consoleErrors.filter((m) => /Content Security Policy|Refused to/i.test(m));
    assert.deepEqual(refused, [], 'CSP refusals in the webview');
    // The page itself saw no refusal (media/host.js listens from before the viewer's
    // scripts); an inline style set as markup here is one, which shows it listens.
    assert.deepEqual(await frame.evaluate(() => window.kestrelHost.violations), []);
    await frame.evaluate(() => { document.body.insertAdjacentHTML('beforeend', '<div style="color: red">x</div>'); });
    await until('the probe refused', () => frame.evaluate(() => window.kestrelHost.violations.length === 1));
    // The status bar: samples, rate, running share.
    const status = await page.$$eval('.statusbar-item', (els) => els.map((e) => e.textContent).find((t) => /kestrel: \d+ samples/.test(t)));
    assert.match(status, /kestrel: \d+ samples · \d+ Hz · running [\d.]+%/);
});

test('the heat follows an edit above it, Clear Heat removes it, Record Command… brings it back', async () => {
    await openFile('hot.c');
    const before = await until('heat decorations', () => heatShown(2));
    const hotBefore = before.find((h) => h.code.includes('sink += i * 0.5'));
    // Two lines inserted at the top of the file: the heat moves down with its line.
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    const after = await until('the heat to move', async () => {
        const h = await heatShown(2);
        const hot = h && h.find((x) => x.code.includes('sink += i * 0.5'));
        return hot && hot.top > hotBefore.top ? h : null;
    }, 20000);
    const hotAfter = after.find((h) => h.code.includes('sink += i * 0.5'));
    assert.equal(hotAfter.heat, hotBefore.heat);
    assert.equal(after.length, before.length, 'as many lines hot as before: ' + JSON.stringify(after));
    for (const b of before) assert.ok(after.some((a) => a.code === b.code && a.heat === b.heat), 'moved with its line: ' + JSON.stringify([b, after]));
    await page.keyboard.press('Control+Z');
    await page.keyboard.press('Control+Z');
    await runCommand('Kestrel: Clear Heat');
    await until('the heat to go', async () => (await heatShown(1)) === null, 20000);
    // Record Command…: a command line typed in, the program compiled beforehand.
    const prog = join(work, 'hot-prog');
    const cc = spawnSync('cc', ['-O2', '-g', '-fno-omit-frame-pointer', '-o', prog, join(ws, 'hot.c')], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
    await runCommand('Kestrel: Record Command…');
    await until('the choice of task or command line', () => page.$$eval('.quick-input-list .monaco-list-row',
        (rows) => rows.some((r) => r.textContent.includes('Type a command line'))));
    await page.keyboard.press('Enter');
    await until('the command line box', () => page.$$eval('.quick-input-widget .quick-input-message, .quick-input-widget',
        (els) => els.some((e) => e.textContent.includes('run without a shell'))));
    await page.keyboard.type(prog);
    await page.keyboard.press('Enter');
    await openFile('hot.c');
    const again = await until('heat from the recorded run', () => heatShown(2), 120000);
    assert.ok(again.some((h) => h.code.includes('sink += i * 0.5')), JSON.stringify(again));
});

test('a run cancelled from its progress notification ends the program and says so', async () => {
    await openFile('endless.c');
    await runCommand('Kestrel: Profile Current File');
    await until('the program to run', async () => spawnSync('pgrep', ['-x', 'endless']).status === 0, 60000);
    const cancel = await until('the Cancel button', async () => {
        for (const b of await page.$$('.notifications-toasts .monaco-button'))
            if ((await b.textContent()).trim() === 'Cancel') return b;
        return null;
    });
    await cancel.click();
    await until('the cancelled notification', () => page.$$eval('.notifications-toasts .notification-list-item-message',
        (els) => els.some((e) => e.textContent === 'kestrel: cancelled')), 30000);
    await until('the program to end', async () => spawnSync('pgrep', ['-x', 'endless']).status === 1, 20000);
});

test('a file that does not compile: a notification with the compiler message', async () => {
    await openFile('bad.c');
    await runCommand('Kestrel: Profile Current File');
    const note = await until('the error notification', () => page.$$eval('.notifications-toasts .notification-list-item-message',
        (els) => els.map((e) => e.textContent).find((t) => t.includes('does not compile')) || null), 90000);
    assert.match(note, /bad\.c:3:\d+: error: use of undeclared identifier 'undefined_thing'/);
});

function buildWork(out, defines) {
    const src = join(work, 'work.c');
    writeFileSync(src, WORK_C);
    const cc = spawnSync('cc', ['-O2', '-g', '-fno-omit-frame-pointer', ...defines.map((d) => '-D' + d), '-o', out, src], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
}

/* Marks every viewer document the page has now, so that a graph found later without
 * the mark is one the extension loaded since: the new profile's, not the last one's. */
async function markGraphs() {
    for (const f of page.frames()) await f.evaluate(() => { if (window.kestrelViewer) window.kestrelTestSeen = true; }).catch(() => {});
}

/* Whether the webview of a viewer frame is shown (not hidden under another tab). */
async function shown(frame) {
    let top = frame;
    while (top.parentFrame() && top.parentFrame() !== page.mainFrame()) top = top.parentFrame();
    return (await top.frameElement()).isVisible();
}

/* A viewer document loaded since markGraphs() with `fn` drawn: its widest box is over
 * 20 px wide and coloured unlike the empty canvas under the graph (the viewer draws in
 * an animation frame after it lays out, so both are waited for), in a webview that is
 * shown. It is marked in turn. */
async function newGraph(fn, ms = 120000) {
    return until('a new flame graph with ' + fn + ' drawn', async () => {
        for (const f of page.frames()) {
            const px = await f.evaluate((n) => {
                if (!window.kestrelViewer || window.kestrelTestSeen) return null;
                const b = window.kestrelViewer.boxes(n)[0];
                if (!b || b.w <= 20) return null;
                const c = document.getElementById('flame'), r = window.devicePixelRatio || 1, g = c.getContext('2d');
                const at = (u, v) => [...g.getImageData(Math.floor(u * r), Math.floor(v * r), 1, 1).data].join();
                return { box: at(b.x + 1.5, b.y + 1.5), empty: at(4, c.clientHeight - 4) };
            }, fn).catch(() => null);
            if (!px || px.box === px.empty || !(await shown(f))) continue;
            await markGraphs();
            return f;
        }
        return null;
    }, ms);
}

/* The flame graph panel's tab, with that title, is the one shown in its group. */
const panelTitled = (title) => until('the panel ' + title, () => page.$$eval('.tabs-container .tab.active .label-name',
    (names, t) => names.some((x) => x.textContent.trim() === t), title), 30000);

const statusOf = () => page.$$eval('.statusbar-item', (els) => els.map((e) => e.textContent).find((t) => /^\s*kestrel: /.test(t)) || null);

const toast = (re, ms = 120000) => until('a notification matching ' + re, () => page.$$eval('.notifications-toasts .notification-list-item-message',
    (els) => els.map((e) => e.textContent)).then((t) => t.find((x) => re.test(x)) || null), ms);

async function clearNotifications() {
    await runCommand('Notifications: Clear All Notifications');
    await until('no notifications', () => page.$$eval('.notifications-toasts .notification-list-item', (els) => els.length === 0), 20000);
}

/* Open Profile… from the command palette; in a browser VS Code's file dialog is a
 * path typed into the quick input. */
async function openProfile(file) {
    await runCommand('Kestrel: Open Profile…');
    await until('the file dialog', () => page.$eval('.quick-input-widget input', (i) => i.offsetParent !== null && i.value.startsWith('/')), 30000);
    /* The path typed in (again while the dialog, still setting its first folder, makes
     * something else of it); Enter once the dialog lists the file's folder with the
     * file (the list draws only the rows in view: each profile is in a small folder of
     * its own). */
    const base = file.split('/').pop();
    await until('the dialog to take ' + file + ' and offer ' + base, async () => {
        if (await page.inputValue('.quick-input-widget input') !== file) {
            await page.fill('.quick-input-widget input', file);
            return null;
        }
        return page.$$eval('.quick-input-list .monaco-list-row', (rows, b) => rows.some((r) => r.textContent.includes(b)), base);
    }, 30000);
    await page.keyboard.press('Enter');
}

test('Open Profile…: a raw profile, a CPU pprof, a heap pprof and a profile.json each show their graph', async () => {
    const prof = join(work, 'prof');
    mkdirSync(prof);
    for (const [name, fn, heap] of [['rawrun', 'raw_work', false], ['pprofrun', 'pprof_work', true]]) {
        buildWork(join(prof, name), ['WORK=' + fn]);
        const r = spawnSync(KESTREL, ['record', ...(heap ? ['--heap'] : []), '-o', join(prof, name), '--', join(prof, name)], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
    }
    const samplesOf = (f) => JSON.parse(readFileSync(f, 'utf8')).totals.samples;
    const alone = (dir, ...files) => {
        mkdirSync(join(prof, dir));
        for (const f of files) copyFileSync(join(prof, f), join(prof, dir, f));
        return join(prof, dir, files[0]);
    };
    await markGraphs();
    await clearNotifications();

    // The raw profile the runtime wrote (STEM.raw/PID.raw.json): symbolized by kestrel.
    const raw = readdirSync(join(prof, 'rawrun.raw')).find((f) => f.endsWith('.raw.json'));
    await openProfile(join(prof, 'rawrun.raw', raw));
    await newGraph('raw_work');
    await panelTitled('kestrel: rawrun.' + raw.split('.')[0]);
    const n = samplesOf(join(prof, 'rawrun.profile.json'));
    await until('the status bar to say the raw profile\'s ' + n + ' samples', async () => new RegExp('kestrel: ' + n + ' samples · 997 Hz').test(await statusOf()), 30000);

    // A CPU pprof.
    await openProfile(alone('cpu', 'pprofrun.pb.gz'));
    const cpu = await newGraph('pprof_work');
    assert.match(await cpu.$eval('#summary', (e) => e.textContent), /^CPU profile/);
    await panelTitled('kestrel: pprofrun');

    // The heap pprof of the same run: heap_grow's bytes, not pprof_work's time.
    await openProfile(alone('heap', 'pprofrun.heap.pb.gz'));
    const heap = await newGraph('heap_grow');
    assert.deepEqual(await heap.evaluate(() => window.kestrelViewer.boxes('pprof_work')), [], 'no CPU time in the heap graph');
    const summary = await heap.$eval('#summary', (e) => e.textContent);
    assert.match(summary, /^heap profile.*inuse_space 9\d\.\d MiB/, summary);
    assert.match(await heap.$eval('#type', (s) => s.selectedOptions[0].textContent), /\(bytes\)/);
    await panelTitled('kestrel: pprofrun.heap');
    assert.match(await until('the heap status', async () => { const t = await statusOf(); return /heap/.test(t) && t; }, 30000),
        /kestrel: heap inuse_space 9\d\.\d MiB · about \d+ sampled allocations/);

    // A profile.json: its heat and status, and the graph of the run's STEM.html beside it.
    await openProfile(alone('json', 'rawrun.profile.json', 'rawrun.html'));
    await newGraph('raw_work');
    await panelTitled('kestrel: rawrun');
    await until('the status bar to say the profile.json\'s ' + n + ' samples', async () => new RegExp('kestrel: ' + n + ' samples · 997 Hz').test(await statusOf()), 30000);
    // Each had enough samples: no warning that it was too small, nor any error.
    assert.deepEqual(await page.$$eval('.notifications-toasts .notification-list-item-message',
        (els) => els.map((e) => e.textContent).filter((t) => t.startsWith('kestrel:'))), []);
});

test('Record Command… of a workspace task: its program, arguments and folder', async () => {
    buildWork(join(ws, 'task-prog'), ['WORK=task_work', 'NEED_ARG="from-task"']);
    await markGraphs();
    await runCommand('Kestrel: Record Command…');
    await until('the task in the list', () => page.$$eval('.quick-input-list .monaco-list-row',
        (rows) => rows.some((r) => r.textContent.includes('work with an argument'))), 60000);
    await page.fill('.quick-input-widget input', 'work with an argument');
    await until('the task focused', () => page.$$eval('.quick-input-list .monaco-list-row.focused',
        (rows) => rows.some((r) => r.textContent.includes('work with an argument'))));
    await page.keyboard.press('Enter');
    // Without its argument the program exits 4 at once: task_work drawn says it got it.
    await newGraph('task_work');
    await panelTitled('kestrel: task-prog');
    assert.deepEqual(await page.$$eval('.notifications-toasts .notification-list-item-message',
        (els) => els.map((e) => e.textContent).filter((t) => t.startsWith('kestrel:'))), []);
});

test('notifications say why: a program that fails or crashes, a profile too small, no kestrel', async () => {
    await clearNotifications();
    // Exits 3 after its work: said, and what was profiled is shown.
    await openFile('fails.c');
    await markGraphs();
    await runCommand('Kestrel: Profile Current File');
    await toast(/^kestrel: the program exited with status 3; showing what was profiled$/);
    await newGraph('fail_work');
    await clearNotifications();
    // Aborts after its work.
    await openFile('crashes.c');
    await runCommand('Kestrel: Profile Current File');
    await toast(/^kestrel: the program crashed \(SIGABRT\); showing what was profiled$/);
    await newGraph('crash_work');
    await clearNotifications();
    // A few milliseconds of work: under 100 samples.
    await openFile('short.c');
    await runCommand('Kestrel: Profile Current File');
    const small = await toast(/too few/);
    assert.match(small, /^kestrel: the profile has \d+ samples, too few to trust \(at least 100\): make the program run longer or raise the rate$/);
    assert.ok(+/has (\d+) samples/.exec(small)[1] < 100, small);
    await clearNotifications();
    // kestrel.path names a kestrel that is not there (any more).
    rmSync(KESTREL_LINK);
    try {
        await openFile('short.c');
        await runCommand('Kestrel: Profile Current File');
        await toast(new RegExp('^kestrel: kestrel\\.path is ' + KESTREL_LINK.replace(/[.]/g, '\\.') + ', which does not exist$'), 30000);
    } finally {
        symlinkSync(KESTREL, KESTREL_LINK);
    }
    await clearNotifications();
});

test('Profile Current File on a C++ file from the title bar: the demangled name in the graph, the heat in the file', async () => {
    await openFile('acc.cpp');
    await markGraphs();
    // The flame button of the editor's title bar, shown for C++ as for C.
    const button = await until('the Profile Current File button', async () => {
        for (const b of await page.$$('.editor-group-container.active .editor-actions .action-label'))
            if (/Profile Current File/.test(await b.getAttribute('aria-label') || '')) return b;
        return null;
    }, 30000);
    await button.click();
    const name = 'work::Acc<double>::add_all(long)';
    const frame = await newGraph(name);
    await panelTitled('kestrel: acc');
    const b = (await frame.evaluate((n) => window.kestrelViewer.boxes(n), name))[0];
    const cb = await frame.locator('#flame').boundingBox();
    await page.mouse.move(cb.x + b.x + Math.min(b.w / 2, 40), cb.y + b.y + b.h / 2);
    const tip = await until('the tooltip', () => frame.$eval('#tooltip', (t) => (!t.hidden && t.textContent) || null));
    assert.ok(tip.includes(name), tip);
    const heat = await until('heat in acc.cpp', () => heatShown(1, 'acc.cpp'));
    assert.ok(heat.some((h) => h.code.includes('sum += T(i) * 0.5')), JSON.stringify(heat));
});

test("the viewer's controls in the panel: zoom and its breadcrumb, pan, thread and state filters, the table", async () => {
    // tests/viewer/busy.c: hot_loop and cold_path on main, a worker thread that sleeps
    // (waiting samples) and runs hot_loop.
    const dir = join(work, 'busy');
    mkdirSync(dir);
    const cc = spawnSync('cc', ['-O2', '-g', '-fno-omit-frame-pointer', '-mno-omit-leaf-frame-pointer', '-pthread',
        '-o', join(dir, 'busy'), resolve('tests/viewer/busy.c')], { encoding: 'utf8' });
    assert.equal(cc.status, 0, cc.stderr);
    const r = spawnSync(KESTREL, ['record', '-o', join(dir, 'busy'), '--', join(dir, 'busy')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    await markGraphs();
    await openProfile(join(dir, 'busy.raw', readdirSync(join(dir, 'busy.raw')).find((f) => f.endsWith('.raw.json'))));
    const frame = await newGraph('hot_loop');
    const cb = await frame.locator('#flame').boundingBox();
    const boxOf = async (n) => (await frame.evaluate((x) => window.kestrelViewer.boxes(x), n))[0] || null;
    const crumbs = () => frame.$eval('#crumbs', (e) => e.textContent);
    // A click on cold_path zooms it to the whole width (and opens its source beside the
    // graph, which stays shown); the breadcrumb's first crumb goes back.
    const cold = await boxOf('cold_path');
    assert.ok(cold && cold.w < cb.width * 0.6, JSON.stringify(cold));
    await page.mouse.click(cb.x + cold.x + 3, cb.y + cold.y + 3);
    await until('cold_path zoomed to the width', async () => /^all › (.* › )?cold_path$/.test(await crumbs()) &&
        Math.abs((await boxOf('cold_path')).w - cb.width) < 1.5, 30000);
    await until('busy.c opened at cold_path', () => page.$$eval('.tabs-container .tab.active .label-name', (ns) => ns.some((n) => n.textContent.trim() === 'busy.c')), 30000);
    assert.ok(await shown(frame), 'the graph is still shown beside the source');
    await frame.click('#crumbs button:first-child');
    await until('back to all', async () => (await crumbs()) === 'all' && Math.abs((await boxOf('cold_path')).w - cold.w) < 0.01, 30000);
    // A drag pans: hot_loop moves with the mouse, its width kept.
    await frame.evaluate(() => window.kestrelViewer.zoomAround(10, 0.5));
    const half = await boxOf('hot_loop');
    const from = { x: cb.x + cb.width * 0.7, y: cb.y + half.y + 4 };
    await page.mouse.move(from.x, from.y);
    await page.mouse.down();
    await page.mouse.move(from.x - 100, from.y, { steps: 5 });
    await page.mouse.up();
    const panned = await until('hot_loop panned', async () => { const b = await boxOf('hot_loop'); return Math.abs(b.x - (half.x - 100)) < 2 ? b : null; }, 30000);
    assert.ok(Math.abs(panned.w - half.w) < 0.5, JSON.stringify([half, panned]));
    await frame.click('#crumbs button:first-child');
    // The thread filter: the worker alone has hot_loop and no cold_path.
    const options = await frame.$$eval('#thread option', (os) => os.map((o) => [o.value, o.textContent]));
    const worker = options.find(([v, t]) => v !== '-1' && !t.startsWith('main') && !t.startsWith('busy'));
    assert.ok(worker, 'no worker thread in ' + JSON.stringify(options));
    await frame.selectOption('#thread', worker[0]);
    await until('the worker alone', async () => (await boxOf('cold_path')) === null && (await boxOf('hot_loop')) !== null, 30000);
    await frame.selectOption('#thread', '-1');
    // Running and waiting: the worker's sleeps add samples to the on-CPU ones.
    const count = async () => +/([\d,]+) samples/.exec(await frame.$eval('#summary', (e) => e.textContent))[1].replace(/,/g, '');
    const cpu = await count();
    await frame.selectOption('#state', 'both');
    await until('waiting samples counted', async () => (await count()) > cpu, 30000);
    await frame.selectOption('#state', 'cpu');
    // The table: by total when its header is clicked; a row selects its function.
    const totals = () => frame.$$eval('#hot tbody tr', (trs) => trs.map((tr) => parseFloat(tr.children[2].textContent)));
    await frame.click('#hot th button[data-key="total"]');
    await until('the table by total', async () => { const t = await totals(); return t.length > 2 && t.every((v, i) => i === 0 || t[i - 1] >= v) && t[0] > t[t.length - 1]; }, 30000);
    await frame.locator('#hot tbody tr', { hasText: 'cold_path' }).first().click();
    await until('cold_path selected', () => frame.$eval('#hot tbody tr.selected td.fn', (e) => e.textContent === 'cold_path'), 30000);
    assert.match(await frame.$eval('#details', (e) => e.textContent), /^cold_path/);
});

test('kestrel.heap turned on in the Settings editor: Profile Current File offers the heap profile, its graph in bytes', async () => {
    await runCommand('Preferences: Open Workspace Settings');
    const search = await until('the settings editor', () => page.$('.settings-editor .suggest-input-container'), 30000);
    await search.click();
    await page.keyboard.type('kestrel.heap');
    const box = await until('the kestrel.heap checkbox', async () => {
        for (const item of await page.$$('.settings-editor .setting-item-bool'))
            if (/Kestrel: Heap/.test(await item.textContent())) return item.$('.setting-value-checkbox');
        return null;
    }, 30000);
    assert.equal(await box.getAttribute('aria-checked'), 'false');
    await box.click();
    await until('kestrel.heap on in the workspace settings', async () =>
        JSON.parse(readFileSync(join(ws, '.vscode/settings.json'), 'utf8'))['kestrel.heap'] === true, 30000);
    await clearNotifications();
    await openFile('grows.c');
    await markGraphs();
    await runCommand('Kestrel: Profile Current File');
    await newGraph('grow_work');
    const offer = await toast(/^kestrel: the heap profile of grows/);
    assert.match(offer, /^kestrel: the heap profile of grows: inuse_space 9\d\.\d MiB · about \d+ sampled allocations$/);
    const show = await until('the Show Heap Graph button', async () => {
        for (const b of await page.$$('.notifications-toasts .monaco-button'))
            if ((await b.textContent()).trim() === 'Show Heap Graph') return b;
        return null;
    }, 30000);
    await show.click();
    const heap = await newGraph('heap_grow');
    assert.match(await heap.$eval('#summary', (e) => e.textContent), /^heap profile.*inuse_space 9\d\.\d MiB/);
    await panelTitled('kestrel: grows.heap');
    await until('the heap status', async () => /kestrel: heap inuse_space 9\d\.\d MiB · about \d+ sampled allocations/.test(await statusOf()), 30000);
});
