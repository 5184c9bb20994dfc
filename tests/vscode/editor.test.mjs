// The packaged extension (build/editors/kestrel-profiler.vsix) installed into code-server
// and used as a user would: open a C file, run Kestrel: Profile Current File from the
// command palette, then look at the flame graph in the webview (hot_loop drawn, a hover
// tooltip, a click moving the editor to hot_loop's line), the heat after the hot lines
// and its moving with an edit, Clear Heat, Record Command… of a typed command line, and
// a file that does not compile giving a notification with the compiler's message. A
// wait that times out leaves a screenshot in build/test-logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from '../../web/node_modules/playwright-core/index.mjs';

const CS = process.env.CODE_SERVER_DIR;
const entry = join(CS, 'node_modules/code-server/out/node/entry.js');
const work = mkdtempSync('/tmp/kestrel-vscode-test-');
const ws = join(work, 'ws'), userData = join(work, 'user'), extDir = join(work, 'ext');
const KESTREL = resolve('build/bin/kestrel');
let server, browser, page, serverLog = '';
const consoleErrors = [];

const freePort = () => new Promise((ok) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); }); });
const lineOf = (file, text) => readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(text)) + 1;

async function until(what, f, ms = 60000) {
    const end = Date.now() + ms;
    for (;;) {
        const v = await f().catch(() => null);
        if (v) return v;
        if (Date.now() > end) { if (page) await page.screenshot({ path: 'build/test-logs/vscode-editor-timeout.png' }).catch(() => {}); throw new Error('timed out waiting for ' + what); }
        await new Promise((r) => setTimeout(r, 250));
    }
}

test.before(async () => {
    mkdirSync(join(ws, '.vscode'), { recursive: true });
    mkdirSync(join(userData, 'User'), { recursive: true });
    mkdirSync(join(work, 'tmp'));
    copyFileSync('tests/vscode/hot.c', join(ws, 'hot.c'));
    writeFileSync(join(ws, 'bad.c'), 'int main(void)\n{\n    return undefined_thing;\n}\n');
    writeFileSync(join(ws, '.vscode/settings.json'), JSON.stringify({ 'kestrel.path': KESTREL }));
    writeFileSync(join(userData, 'User/settings.json'), JSON.stringify({
        'workbench.startupEditor': 'none', 'security.workspace.trust.enabled': false,
        'telemetry.telemetryLevel': 'off', 'extensions.autoCheckUpdates': false, 'workbench.tips.enabled': false,
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
    await page.keyboard.type(title);
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
 * The editor is the group whose open tab is hot.c (the focused one if two are): a click
 * in the flame graph may leave the focus on the graph's group after the editor moved. */
const heatShown = (atLeast) => page.evaluate((n) => {
    const out = [];
    const groups = [...document.querySelectorAll('.editor-group-container')].filter((g) => {
        const t = g.querySelector('.tabs-container .tab.active');
        return t && t.textContent.includes('hot.c');
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
}, atLeast);

test('Profile Current File: the flame graph, a tooltip, click-to-source, the heat of the hot lines', async () => {
    await openFile('hot.c');
    await runCommand('Kestrel: Profile Current File');
    const frame = await viewerFrame();
    const boxes = await until('hot_loop drawn', () => frame.evaluate(() => {
        const b = window.kestrelViewer.boxes('hot_loop');
        return b.length && b[0].w > 20 ? b : null;
    }));
    const b = boxes[0];
    // Drawn: hot_loop's box is coloured, unlike the empty canvas below the graph.
    const px = await frame.evaluate(({ x, y }) => {
        const c = document.getElementById('flame'), r = window.devicePixelRatio || 1, g = c.getContext('2d');
        const at = (u, v) => [...g.getImageData(Math.floor(u * r), Math.floor(v * r), 1, 1).data];
        return { box: at(x, y), empty: at(4, c.clientHeight - 4) };
    }, { x: b.x + 1.5, y: b.y + 1.5 });
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
    writeFileSync(join(ws, 'endless.c'), 'int main(void)\n{\n    for (volatile unsigned long i = 0;; i++) {\n    }\n}\n');
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
