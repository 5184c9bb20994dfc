// The viewer in a real browser: Debian's chromium driven by playwright-core. The CPU
// and heap pages are written by the CLI from a real run of tests/viewer/busy.c
// (`kestrel record --heap`), made fresh for each test run; two hand-made pages cover
// what a run cannot produce on demand (a missing source with its reason, a page
// without data).
//   node --test tests/viewer/browser.test.mjs   (from the repository root, after make)
import test from 'node:test';
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readdirSync, existsSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join, resolve} from 'node:path';
import {chromium} from '../../web/node_modules/playwright-core/index.mjs';
import {cpuData} from './fixtures.mjs';
import {writePage} from './page.mjs';

const KESTREL = resolve('build/bin/kestrel');
const BUSY = resolve('build/tests/viewer/busy');
const TEMPLATE = resolve('build/web/viewer.html');
const XSS = '<img src=x onerror=alert(1)>';
const BG = [251, 250, 247];

const work = mkdtempSync(join(tmpdir(), 'kestrel-viewer-'));
let context, dialogs = [];

function record()
{
    const r = spawnSync(KESTREL, ['record', '--heap', '-o', join(work, 'busy'), '--report=' + join(work, 'busy.report'), '--', BUSY],
                        {encoding: 'utf8', timeout: 120000});
    // A heap profile cannot be a V8 cpuprofile; record says so and exits 1 for that
    // export alone. Any other failure fails here.
    const failures = r.stderr.split('\n').filter((l) => /^kestrel: .*: /.test(l) && !/\.heap\.cpuprofile: /.test(l));
    assert.ok(r.status === 0 || (r.status === 1 && failures.length === 0), 'kestrel record failed: ' + r.stderr);
    for (const f of ['busy.html', 'busy.heap.html']) assert.ok(existsSync(join(work, f)), f + ' not written');
}

test.before(async () => {
    record();
    context = await chromium.launchPersistentContext(mkdtempSync(join(work, 'profile-')), {
        executablePath: '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
               '--disable-sync', '--no-first-run'],
        viewport: {width: 1280, height: 760},
    });
});

test.after(async () => {
    if (context) await context.close();
    rmSync(work, {recursive: true, force: true});
});

async function open(file)
{
    const page = await context.newPage();
    page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) errors.push('network: ' + r.url()); });
    await page.goto('file://' + file);
    await settle(page);
    page.errors = errors;
    return page;
}

const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));

// The widest box of a frame, in page coordinates, and a point inside it away from its label.
async function box(page, name)
{
    const rects = await page.evaluate((n) => window.kestrelViewer.boxes(n), name);
    if (!rects.length) return null;
    const c = await page.locator('#flame').boundingBox();
    const r = rects[0];
    return {...r, px: c.x + r.x + 1.5, py: c.y + r.y + 1.5, cx: r.x + 1.5, cy: r.y + 1.5};
}

async function pixel(page, b)
{
    return page.evaluate(([x, y]) => {
        const cv = document.getElementById('flame'), d = window.devicePixelRatio || 1;
        return Array.from(cv.getContext('2d').getImageData(Math.floor(x * d), Math.floor(y * d), 1, 1).data.slice(0, 3));
    }, [b.cx, b.cy]);
}

const distance = (a, b) => a.reduce((s, v, i) => s + Math.abs(v - b[i]), 0);

async function drawnPixels(page)
{
    return page.evaluate((bg) => {
        const cv = document.getElementById('flame');
        const data = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
        let n = 0;
        for (let i = 0; i < data.length; i += 4)
            if (data[i] !== bg[0] || data[i + 1] !== bg[1] || data[i + 2] !== bg[2]) n++;
        return {n, of: cv.width * cv.height};
    }, BG);
}

const text = (page, sel) => page.locator(sel).textContent();

// The page's CSP forbids eval, so waitForFunction cannot run: poll a text instead.
async function waitText(page, sel, ok)
{
    for (let i = 0; i < 250; i++) {
        const t = await text(page, sel);
        if (ok(t)) return t;
        await page.waitForTimeout(20);
    }
    throw new Error(sel + ' never got the expected text; it reads: ' + (await text(page, sel)));
}
const hotNames = (page) => page.$$eval('#hot tbody td.fn', (tds) => tds.map((t) => t.textContent));
const hotColumn = (page, k) => page.$$eval('#hot tbody tr', (trs, k) => trs.map((tr) => parseFloat(tr.children[k].textContent)), k);

test('the CPU page draws its flame graph on the canvas', async () => {
    const page = await open(join(work, 'busy.html'));
    assert.deepEqual(page.errors, []);
    const px = await drawnPixels(page);
    assert.ok(px.n > px.of * 0.02, 'only ' + px.n + ' drawn pixels of ' + px.of);
    const hot = await box(page, 'hot_loop');
    assert.ok(hot && hot.w > 50, 'hot_loop is not drawn wide');
    const ramp = await page.evaluate(() => KColors.RAMP);
    const rgb = await pixel(page, hot);
    const hex = '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
    assert.ok(ramp.includes(hex), 'hot_loop is drawn in ' + hex + ', not a ramp colour');
    assert.match(await text(page, '#summary'), /CPU profile · [\d,]+ samples/);
    await page.close();
});

test('in a narrow window (an editor\'s side panel) the graph keeps the width, the table goes under it', async () => {
    const page = await open(join(work, 'busy.html'));
    await page.setViewportSize({width: 360, height: 700});
    await settle(page);
    const graph = await page.locator('#flame').boundingBox(), side = await page.locator('#side').boundingBox();
    assert.ok(graph.width > 330, 'the graph is ' + graph.width + ' px wide in a 360 px window');
    assert.ok(side.y >= graph.y + graph.height - 1, 'the table is under the graph: ' + JSON.stringify({graph, side}));
    const hot = await box(page, 'hot_loop');
    assert.ok(hot && hot.w > 50, 'hot_loop is not drawn wide');
    assert.notDeepEqual(await pixel(page, hot), BG, 'hot_loop is not drawn');
    await page.close();
});

test('hovering a frame shows its tooltip: name, file:line, self and total with ±SE, samples', async () => {
    const page = await open(join(work, 'busy.html'));
    assert.equal(await page.locator('#tooltip').isHidden(), true);
    const hot = await box(page, 'hot_loop');
    await page.mouse.move(hot.px + 4, hot.py + 4);
    await page.locator('#tooltip').waitFor({state: 'visible'});
    const tip = await text(page, '#tooltip');
    assert.match(tip, /^hot_loop/);
    assert.match(tip, /\/tests\/viewer\/busy\.c:\d+/);
    assert.match(tip, /self\s*\d+\.\d+% ±\d+\.\d+/);
    assert.match(tip, /total\s*\d+\.\d+% ±\d+\.\d+/);
    assert.match(tip, /samples\s*\d+/);
    await page.mouse.move(5, 5);
    await page.locator('#tooltip').waitFor({state: 'hidden'});
    await page.close();
});

test('search dims what does not match and says how much matches', async () => {
    const page = await open(join(work, 'busy.html'));
    const cold = await box(page, 'cold_path'), hot = await box(page, 'hot_loop');
    const coldBefore = await pixel(page, cold), hotBefore = await pixel(page, hot);
    await page.fill('#search', 'hot_lo');
    await waitText(page, '#match', (t) => t !== '');
    await settle(page);
    const said = await text(page, '#match');
    const m = said.match(/^(\d+\.\d)% of the selection matches “hot_lo”$/);
    assert.ok(m, 'match line: ' + said);
    // hot_loop is the only match: the share is its total in the table.
    const names = await hotNames(page), totals = await hotColumn(page, 2);
    assert.equal(m[1], totals[names.indexOf('hot_loop')].toFixed(1));
    const coldAfter = await pixel(page, cold), hotAfter = await pixel(page, hot);
    assert.deepEqual(hotAfter, hotBefore, 'a match must stay as it was');
    assert.ok(distance(coldAfter, BG) < distance(coldBefore, BG) / 2, 'cold_path not dimmed: ' + coldBefore + ' -> ' + coldAfter);
    await page.fill('#search', 'no_such_function_anywhere');
    await waitText(page, '#match', (t) => /no frame matches/.test(t));
    await page.fill('#search', '');
    await waitText(page, '#match', (t) => t === '');
    await settle(page);
    assert.deepEqual(await pixel(page, cold), coldBefore);
    await page.close();
});

test('click zooms into a frame, the breadcrumb and Escape go back', async () => {
    const page = await open(join(work, 'busy.html'));
    const width = (await page.locator('#flame').boundingBox()).width;
    const cold = await box(page, 'cold_path');
    assert.ok(cold.w < width * 0.6);
    await page.mouse.click(cold.px + 3, cold.py + 3);
    await settle(page);
    assert.match(await text(page, '#crumbs'), /^all › (.* › )?cold_path$/);
    const zoomed = await box(page, 'cold_path');
    assert.ok(Math.abs(zoomed.w - width) < 1.5, 'zoomed width ' + zoomed.w + ' of ' + width);
    assert.ok(Math.abs(zoomed.x) < 0.5);
    const hot = await page.evaluate(() => window.kestrelViewer.boxes('hot_loop'));
    assert.ok(hot.every((r) => r.x >= width - 0.5 || r.x + r.w <= 0.5), 'a sibling is still on screen');
    await page.keyboard.press('Escape');
    await settle(page);
    assert.equal(await text(page, '#crumbs'), 'all');
    assert.ok(Math.abs((await box(page, 'cold_path')).w - cold.w) < 0.01);
    // The breadcrumb: zoom twice, then click its first crumb.
    await page.mouse.click(cold.px + 3, cold.py + 3);
    const inner = await box(page, 'cold_path');
    await page.mouse.click(inner.px + 3, inner.py + 3);
    await page.click('#crumbs button:first-child');
    await settle(page);
    assert.equal(await text(page, '#crumbs'), 'all');
    assert.ok(Math.abs((await box(page, 'cold_path')).w - cold.w) < 0.01);
    // Dragging pans without zooming.
    const before = await box(page, 'hot_loop');
    await page.mouse.click(before.px + 3, before.py + 3);
    const z = await box(page, 'hot_loop');
    await page.evaluate(() => window.kestrelViewer.zoomAround(10, 0.5));
    const half = await box(page, 'hot_loop');
    await page.mouse.move(half.px + 200, half.py + 4);
    await page.mouse.down();
    await page.mouse.move(half.px + 100, half.py + 4, {steps: 5});
    await page.mouse.up();
    await settle(page);
    const panned = await box(page, 'hot_loop');
    assert.ok(Math.abs(panned.x - (half.x - 100)) < 2, 'pan moved ' + (panned.x - half.x));
    assert.ok(Math.abs(panned.w - half.w) < 0.5 && half.w > z.w * 1.5);
    await page.close();
});

test('Time Order shows the samples in time per thread; Left Heavy merges them', async () => {
    const page = await open(join(work, 'busy.html'));
    // The worker's runs are told apart by its sleeps: on-CPU and waiting samples both.
    assert.equal(await page.locator('#state').inputValue(), 'cpu', 'on-CPU is the default');
    await page.selectOption('#state', 'both');
    await settle(page);
    const merged = (await page.evaluate(() => window.kestrelViewer.boxes('hot_loop'))).length;
    await page.selectOption('#view', 'time');
    await settle(page);
    const runs = await page.evaluate(() => window.kestrelViewer.boxes('hot_loop'));
    // main calls hot_loop 4 times between other functions, the worker 4 times between sleeps.
    assert.ok(runs.length > merged && runs.length >= 6, 'runs ' + runs.length + ' merged ' + merged);
    const px = await drawnPixels(page);
    assert.ok(px.n > px.of * 0.02);
    await page.selectOption('#view', 'merged');
    await settle(page);
    assert.equal((await page.evaluate(() => window.kestrelViewer.boxes('hot_loop'))).length, merged);
    await page.close();
});

test('the thread filter keeps one thread', async () => {
    const page = await open(join(work, 'busy.html'));
    const all = await text(page, '#summary');
    assert.ok(await box(page, 'cold_path'));
    const options = await page.$$eval('#thread option', (os) => os.map((o) => [o.value, o.textContent]));
    const worker = options.find(([v, t]) => v !== '-1' && !t.startsWith('main'));
    assert.ok(worker, 'no worker thread in ' + JSON.stringify(options));
    await page.selectOption('#thread', worker[0]);
    await settle(page);
    assert.equal(await box(page, 'cold_path'), null, 'cold_path runs on main only');
    assert.ok(await box(page, 'hot_loop'));
    assert.ok(!(await hotNames(page)).includes('cold_path'));
    const n = (s) => parseInt(s.match(/([\d,]+) samples/)[1].replace(/,/g, ''), 10);
    const one = await text(page, '#summary');
    assert.ok(n(one) < n(all) && n(one) > 0, one + ' vs ' + all);
    await page.close();
});

test('the hot-function table sorts and selects in the graph', async () => {
    const page = await open(join(work, 'busy.html'));
    const sortedDesc = (a) => a.every((v, i) => i === 0 || a[i - 1] >= v);
    assert.ok(sortedDesc(await hotColumn(page, 1)), 'not by self');
    await page.click('#hot th button[data-key="total"]');
    const totals = await hotColumn(page, 2);
    assert.ok(sortedDesc(totals) && totals[0] > totals[totals.length - 1], 'not by total: ' + totals);
    await page.click('#hot th button[data-key="total"]');
    const up = await hotColumn(page, 2);
    assert.ok(up.every((v, i) => i === 0 || up[i - 1] <= v), 'not ascending');
    await page.click('#hot th button[data-key="name"]');
    const names = await hotNames(page);
    assert.ok(names.every((v, i) => i === 0 || names[i - 1] <= v), 'not by name: ' + names);
    // Selecting a row outlines its boxes and dims the others.
    const cold = await box(page, 'cold_path'), hot = await box(page, 'hot_loop');
    const coldBefore = await pixel(page, cold);
    await page.locator('#hot tbody tr', {hasText: 'hot_loop'}).first().click();
    await settle(page);
    assert.equal(await page.locator('#hot tbody tr.selected td.fn').textContent(), 'hot_loop');
    assert.ok(distance(await pixel(page, cold), BG) < distance(coldBefore, BG) / 2, 'cold_path not dimmed');
    assert.deepEqual(await pixel(page, {cx: hot.x + hot.w / 2, cy: hot.cy}), [34, 34, 34], 'hot_loop not outlined');
    assert.match(await text(page, '#details'), /^hot_loop/);
    await page.close();
});

test('the source view shows the file with after-line heat and its hot lines', async () => {
    const page = await open(join(work, 'busy.html'));
    const hot = await box(page, 'hot_loop');
    await page.mouse.click(hot.px + 3, hot.py + 3);
    await page.click('#show-source');
    await page.locator('#source').waitFor({state: 'visible'});
    assert.match(await text(page, '#source-file'), /\/tests\/viewer\/busy\.c$/);
    const line = page.locator('#code .ln', {hasText: 'sink += i * 0.5;'});
    assert.equal(await line.count(), 1);
    assert.match(await line.locator('.heat').textContent(), /^\d+\.\d% · [\d,]+ samples?$/);
    const hotLines = await page.$$eval('#hotlines li', (ls) => ls.map((l) => l.textContent));
    assert.ok(hotLines.length >= 2);
    assert.match(hotLines[0], /^line \d+: \d+\.\d% · [\d,]+ samples?$/);
    assert.ok(await page.locator('#ruler i').count() >= 2);
    // The whole file is there, line numbers included.
    assert.ok(await page.locator('#code .ln').count() >= 60);
    await page.keyboard.press('Escape');
    await page.locator('#source').waitFor({state: 'hidden'});
    // A frame whose file is not readable here says so.
    const other = await page.evaluate(() => {
        for (const tr of document.querySelectorAll('#hot tbody tr'))
            if (!/busy\.c$/.test(tr.children[0].title)) return tr.children[0].textContent;
        return null;
    });
    assert.ok(other, 'no frame outside busy.c');
    await page.locator('#hot tbody tr', {hasText: other}).first().click();
    await page.click('#show-source');
    assert.match(await text(page, '#source-missing'), /is not in this page|no source file/);
    await page.close();
});

test('heap pages switch sample types', async () => {
    const page = await open(join(work, 'busy.heap.html'));
    assert.deepEqual(page.errors, []);
    const types = await page.$$eval('#type option', (os) => os.map((o) => o.textContent));
    assert.deepEqual(types, ['alloc_objects (count)', 'alloc_space (bytes)', 'inuse_objects (count)', 'inuse_space (bytes)']);
    assert.equal(await page.inputValue('#type'), '3');
    const mib = (s, t) => parseFloat(s.match(new RegExp(t + ' ([\\d.]+) MiB'))[1]);
    const inuse = mib(await text(page, '#summary'), 'inuse_space');
    assert.ok(inuse > 4 && inuse < 40, 'in use ' + inuse);
    assert.ok(await box(page, 'churn_heap'));
    await page.selectOption('#type', '1');
    await settle(page);
    const alloc = mib(await text(page, '#summary'), 'alloc_space');
    assert.ok(alloc > inuse * 2, 'allocated ' + alloc + ' in use ' + inuse);
    assert.ok((await drawnPixels(page)).n > 0);
    assert.equal(await page.$eval('#view option[value="time"]', (o) => o.disabled), true);
    assert.equal(await page.locator('#state-box').isHidden(), true);
    await page.close();
});

test('a function named as markup is text: no dialog, no element', async () => {
    const page = await open(join(work, 'busy.html'));
    const names = await hotNames(page);
    const evil = names.find((n) => n.includes(XSS));
    assert.ok(evil, 'the markup-named function is not in the table: ' + names);
    assert.equal(await page.locator('img').count(), 0);
    const b = await box(page, evil);
    await page.mouse.move(b.px + 3, b.py + 3);
    await page.locator('#tooltip').waitFor({state: 'visible'});
    assert.equal(await text(page, '#tooltip .name'), evil);
    await page.mouse.click(b.px + 3, b.py + 3);
    assert.match(await text(page, '#crumbs'), new RegExp(evil.replace(/[()[\]]/g, '\\$&') + '$'));
    await page.fill('#search', '<img');
    await waitText(page, '#match', (t) => t !== '');
    assert.match(await text(page, '#match'), /matches “<img”/);
    assert.equal(await page.locator('img').count(), 0);
    assert.deepEqual(dialogs, []);
    await page.close();
});

test('a long C++ name is one line of the hot table, whole in its title', async () => {
    const data = cpuData();
    const long = 'std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, ' +
        'std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, ' +
        'std::vector<double, std::allocator<double> > >, std::less<std::__cxx11::basic_string<char> > >' +
        '::_M_lower_bound(std::_Rb_tree_node<std::pair<std::__cxx11::basic_string<char> const, double> >*, ' +
        'std::_Rb_tree_node_base*, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)';
    data.frames[2][0] = long;
    const page = await open(writePage(TEMPLATE, data, join(work, 'long-name.html')));
    const cells = await page.$$eval('#hot tbody td.fn', (tds) => tds.map((t) => ({
        text: t.textContent, title: t.title, h: t.getBoundingClientRect().height,
        w: t.getBoundingClientRect().width, sw: t.scrollWidth})));
    const longCell = cells.find((c) => c.text === long), short = cells.find((c) => c.text === 'main');
    assert.ok(longCell, 'the long name is not in the table');
    assert.ok(longCell.h <= short.h + 1, 'the long name takes ' + longCell.h + ' px, one line is ' + short.h);
    assert.ok(longCell.sw > longCell.w, 'the long name is not cut');
    assert.ok(longCell.title.startsWith(long + '\n'), 'the title lacks the whole name');
    assert.deepEqual(page.errors, []);
    await page.close();
});

test('hand-made page: a missing source says why; markup in the title is text', async () => {
    const file = writePage(TEMPLATE, cpuData(), join(work, 'fixture.html'));
    const page = await open(file);
    assert.equal(await text(page, '#title'), 'demo <b>bold</b>');
    assert.equal(await page.locator('#title b').count(), 0);
    const w = await box(page, 'worker');
    await page.mouse.click(w.px + 3, w.py + 3);
    await page.click('#show-source');
    assert.equal(await text(page, '#source-missing'),
                 'The source of /w/gone.c is not in this page: cannot open /w/gone.c: No such file or directory.');
    assert.deepEqual(dialogs, []);
    await page.close();
});

test('a process tree: the Process selector keeps one process, threads are named by it', async () => {
    const d = cpuData();
    d.processes = [{pid: 100, ppid: 1, name: 'demo', chain: null}, {pid: 200, ppid: 100, name: 'helper', chain: 'sh → helper'}];
    d.threads[0].process = 0;
    d.threads[1].process = 1;
    const page = await open(writePage(TEMPLATE, d, join(work, 'tree.html')));
    assert.equal(await page.locator('#process-box').isHidden(), false);
    const opts = await page.$$eval('#process option', (os) => os.map((o) => o.textContent));
    assert.deepEqual(opts, ['all processes', 'demo [100]', 'helper [200] (sh → helper)']);
    const threads = await page.$$eval('#thread option', (os) => os.map((o) => o.textContent));
    assert.ok(threads.some((t) => t.startsWith('helper [200] thread-1')), threads.join(' | '));
    assert.ok(await box(page, 'worker'));
    await page.selectOption('#process', '0');
    await settle(page);
    assert.equal(await box(page, 'worker'), null, 'the other process is filtered out');
    assert.ok(await box(page, 'hot_loop'));
    await page.selectOption('#process', '1');
    await settle(page);
    assert.ok(await box(page, 'worker'));
    assert.equal(await box(page, 'cold_path'), null);
    assert.deepEqual(page.errors, []);
    await page.close();
});

test('a profile of one process has no Process selector', async () => {
    const page = await open(writePage(TEMPLATE, cpuData(), join(work, 'one.html')));
    assert.equal(await page.locator('#process-box').isHidden(), true);
    await page.close();
});

test('the page without a profile says so', async () => {
    const page = await open(TEMPLATE);
    assert.match(await text(page, '#empty'), /No profile in this page/);
    await page.close();
});

test('kestrel view and export --format html write the same viewer', async () => {
    const raw = readdirSync(join(work, 'busy.raw')).find((f) => /^\d+\.raw\.json$/.test(f));
    assert.ok(raw);
    const v = spawnSync(KESTREL, ['view', join(work, 'busy.raw', raw)], {encoding: 'utf8'});
    assert.equal(v.status, 0, v.stderr);
    const viewed = join(work, 'busy.raw', raw.replace(/\.raw\.json$/, '.html'));
    assert.ok(existsSync(viewed));
    const page = await open(viewed);
    assert.ok(await box(page, 'hot_loop'));
    assert.deepEqual(page.errors, []);
    await page.close();
    const e = spawnSync(KESTREL, ['export', '--format', 'html', '-o', join(work, 'export.html'), join(work, 'busy.raw', raw)],
                        {encoding: 'utf8'});
    assert.equal(e.status, 0, e.stderr);
    const p2 = await open(join(work, 'export.html'));
    assert.ok(await box(p2, 'hot_loop'));
    await p2.close();
});

test('kestrel diff --format html: a frame that grew is red, one within noise grey, the tooltip says why', async () => {
    // work_b does 100 of 1000 ms of the work in BASE and 140 of 1040 in NEW.
    const prog = resolve('build/tests/cli/prog_diffwork'), lib = resolve('build/lib/libkestrel.so');
    for (const [name, b] of [['base', '100'], ['new', '140']]) {
        const r = spawnSync(prog, ['600', b, '300'], {
            env: {...process.env, KESTREL_PROFILE: join(work, name + '.json'), KESTREL_PROFILE_HZ: '4999', LD_PRELOAD: lib},
            timeout: 60000,
        });
        assert.equal(r.status, 0, name + ' run failed');
    }
    const out = join(work, 'diff.html');
    const r = spawnSync(KESTREL, ['diff', '--format', 'html', '-o', out, join(work, 'base.json'), join(work, 'new.json')],
                        {encoding: 'utf8'});
    assert.equal(r.status, 0, r.stderr);
    const page = await open(out);
    assert.deepEqual(page.errors, []);
    const [grew, noise] = await page.evaluate(() => [KColors.GREW, KColors.NOISE]);
    const hex = (rgb) => '#' + rgb.map((v) => v.toString(16).padStart(2, '0')).join('');
    const b = await box(page, 'work_b'), m = await box(page, 'main');
    assert.ok(b && m, 'work_b and main are drawn');
    assert.equal(hex(await pixel(page, b)), grew, 'work_b grew: red');
    assert.equal(hex(await pixel(page, m)), noise, 'main is 100% in both: grey');
    await page.mouse.move(b.px + 4, b.py + 4);
    await page.locator('#tooltip').waitFor({state: 'visible'});
    const tip = await text(page, '#tooltip');
    assert.match(tip, /total base\s*\d+\.\d+% ±\d+\.\d+/);
    assert.match(tip, /total new\s*\d+\.\d+% ±\d+\.\d+/);
    assert.match(tip, /total Δ\s*\+\d+\.\d+ ptsz \d+\.\d+ · real/);
    await page.close();
});
