// The viewer with a large profile, in Debian's chromium, side by side with speedscope
// (the npm release in tests/consumers, loaded from file://) on the same stacks.
//
// Profile: 50,000 distinct stacks (depth 8..40, 2,000 functions), 100,000 samples over
// 4 threads (tests/viewer/fixtures.mjs bigData). For each of ROUNDS rounds, in
// alternating order:
//   kestrel  page load -> end of the first flame-graph draw (the page's own clock,
//            performance.now() from navigation start), and the draw time of each of 120
//            horizontal pans of 8 px at 8x zoom (what a drag does per mouse move);
//   both     "graph on screen": from the moment the page is asked to load the profile
//            (kestrel: navigation; speedscope: the file handed to its file input) until
//            the flame graph is visible, polled every 10 ms from node, the same way for both.
// Prints medians and writes the `## Viewer` section of BENCHMARKS.md.
//   node bench/viewer.mjs [ROUNDS]
import {chromium} from '../web/node_modules/playwright-core/index.mjs';
import {mkdtempSync, writeFileSync, readFileSync, existsSync, rmSync} from 'node:fs';
import {tmpdir, loadavg} from 'node:os';
import {join, resolve} from 'node:path';
import {bigData} from '../tests/viewer/fixtures.mjs';
import {writePage} from '../tests/viewer/page.mjs';
import KProfile from '../web/profile.js';
import KStats from '../web/stats.js';
import KColors from '../web/colors.js';
import KLayout from '../web/layout.js';

const ROUNDS = +(process.argv[2] || 5);
const TEMPLATE = resolve('build/web/viewer.html');
const SPEEDSCOPE = resolve('tests/consumers/node_modules/speedscope/dist/release/index.html');
const STACKS = 50000;

const median = (a) => {
    const s = a.slice().sort((x, y) => x - y), m = s.length >> 1;
    return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (a, q) => a.slice().sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(q * a.length))];

function speedscopeFile(d)
{
    const n = d.samples.stack.length;
    return {
        $schema: 'https://www.speedscope.app/file-format-schema.json',
        shared: {frames: d.frames.map(([name, file, line]) => ({name, file, line}))},
        profiles: [{type: 'sampled', name: d.title, unit: 'none', startValue: 0, endValue: n,
                    samples: d.samples.stack.map((s) => d.stacks[s]), weights: d.samples.values[0]}],
        name: d.title, exporter: 'kestrel bench',
    };
}

async function kestrelRound(browser, page)
{
    const p = await browser.newPage({viewport: {width: 1280, height: 800}});
    const t0 = Date.now();
    await p.goto('file://' + page, {waitUntil: 'commit'});
    while (!(await p.evaluate(() => !!(window.kestrelViewer && window.kestrelViewer.firstDrawAt()))))
        await p.waitForTimeout(10);
    const onScreen = Date.now() - t0;
    const firstDraw = await p.evaluate(() => window.kestrelViewer.firstDrawAt());
    const pans = await p.evaluate(() => {
        const v = window.kestrelViewer, out = [];
        v.zoomAround(640, 1 / 8);
        for (let i = 0; i < 120; i++) out.push(v.pan(i < 60 ? -8 : 8, 0));
        return out;
    });
    await p.close();
    return {firstDraw, onScreen, pans};
}

async function speedscopeRound(browser, file)
{
    const p = await browser.newPage({viewport: {width: 1280, height: 800}});
    await p.goto('file://' + SPEEDSCOPE);
    const input = p.locator('input[type=file]');
    await input.waitFor({state: 'attached'});
    const t0 = Date.now();
    await input.setInputFiles(file);
    // Loaded: its flame chart canvas exists and the profile's name is in the toolbar.
    for (;;) {
        const ready = await p.evaluate(() => document.querySelectorAll('canvas').length > 0 &&
                                            document.body.textContent.includes('synthetic 50000 stacks'));
        if (ready) break;
        if (Date.now() - t0 > 120000) throw new Error('speedscope did not load the profile');
        await p.waitForTimeout(10);
    }
    const onScreen = Date.now() - t0;
    await p.close();
    return {onScreen};
}

/* The page's work before its first draw (JSON.parse, decode, weights, functions,
 * colours, Left Heavy layout, hot table), run in node: the same V8, timed in CPU time
 * (process.cpuUsage: this process, GC threads included), which a loaded machine does
 * not inflate the way it inflates wall time. */
function pipelineCpuMs(json)
{
    const c0 = process.cpuUsage();
    const p = KProfile.decode(JSON.parse(json));
    const sw = KProfile.stackWeights(p, {type: p.defaultType, state: 'both', thread: -1});
    const fns = KStats.functions(p.frames), rank = KColors.rankFrames(p.frames);
    KColors.frameColors(p.frames);
    const fnRank = Int32Array.from(fns.list, (fn) => rank[fn.frames[0]]);
    const fstacks = p.stacks.map((st) => st.map((f) => fns.ofFrame[f]));
    KLayout.leftHeavy(fstacks, sw.w, sw.cnt, fnRank);
    KStats.hotFunctions(p, fns, sw, true);
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000;
}

const work = mkdtempSync(join(tmpdir(), 'kestrel-viewer-bench-'));
const data = bigData(STACKS);
const page = writePage(TEMPLATE, data, join(work, 'big.html'));
const ssFile = join(work, 'big.speedscope.json');
writeFileSync(ssFile, JSON.stringify(speedscopeFile(data)));
const haveSpeedscope = existsSync(SPEEDSCOPE);
const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
           '--disable-sync', '--no-first-run'],
});
const load = loadavg()[0];
const k = {firstDraw: [], onScreen: [], pans: [], cpu: []}, s = {onScreen: []};
const json = JSON.stringify(data);
for (let r = 0; r < ROUNDS; r++) {
    k.cpu.push(pipelineCpuMs(json));
    const order = r % 2 ? ['s', 'k'] : ['k', 's'];
    for (const who of order) {
        if (who === 'k') {
            const x = await kestrelRound(browser, page);
            k.firstDraw.push(x.firstDraw);
            k.onScreen.push(x.onScreen);
            k.pans.push(...x.pans);
        } else if (haveSpeedscope) {
            s.onScreen.push((await speedscopeRound(browser, ssFile)).onScreen);
        }
    }
}
await browser.close();
const loadAfter = loadavg()[0];
rmSync(work, {recursive: true, force: true});

const f = (x) => x.toFixed(1);
const html = readFileSync(page === undefined ? TEMPLATE : TEMPLATE).length;
const lines = [
    '## Viewer',
    '',
    'Command: `make bench` (runs `node bench/viewer.mjs ' + ROUNDS + '` from the repository root).',
    '',
    'Profile: ' + STACKS.toLocaleString('en') + ' distinct stacks (depth 8..40, 2,000 functions), ' +
        data.samples.stack.length.toLocaleString('en') + ' samples, 4 threads; Debian chromium headless, ' +
        '--disable-gpu, 1280x800; ' + ROUNDS + ' interleaved rounds; medians. Load average ' + load.toFixed(2) +
        ' before, ' + loadAfter.toFixed(2) + ' after (2 cores shared with other builds).',
    '',
    '| measure | kestrel viewer | speedscope 1.25.0 | ratio |',
    '|---|---|---|---|',
    '| load to first flame-graph draw (page clock, from navigation start) | ' + f(median(k.firstDraw)) + ' ms | — | — |',
    '| CPU time of the page\'s work before the first draw (same code in node, process.cpuUsage) | ' + f(median(k.cpu)) +
        ' ms | — | — |',
    '| load to graph on screen (polled from node every 10 ms, same for both) | ' + f(median(k.onScreen)) + ' ms | ' +
        (s.onScreen.length ? f(median(s.onScreen)) + ' ms' : 'not run') + ' | ' +
        (s.onScreen.length ? (median(s.onScreen) / median(k.onScreen)).toFixed(2) + '× kestrel' : '—') + ' |',
    '| draw time per 8 px pan at 8× zoom (' + k.pans.length + ' frames) | median ' + f(median(k.pans)) +
        ' ms, p95 ' + f(pct(k.pans, 0.95)) + ' ms, max ' + f(Math.max(...k.pans)) + ' ms | — | — |',
    '',
    'Per-round load to first draw (ms): ' + k.firstDraw.map(f).join(', ') +
        (s.onScreen.length ? '; speedscope on screen (ms): ' + s.onScreen.map(String).join(', ') : '') + '.',
    'Frames over 16.7 ms while panning: ' + k.pans.filter((x) => x > 16.7).length + ' of ' + k.pans.length +
        '. The viewer page template is ' + Math.round(html / 1024) + ' KiB before the data.',
    'speedscope gets the same stacks and weights as its own sampled-profile JSON; "on screen" for it is its',
    'flame chart canvas present with the profile loaded (its WebGL canvas cannot be read back), for kestrel',
    'the end of the first canvas draw. Pan frame times are the viewer\'s own draw calls (JavaScript and',
    'canvas commands), not the compositor\'s.',
    '',
];
const section = lines.join('\n');
console.log(section);
const bm = existsSync('BENCHMARKS.md') ? readFileSync('BENCHMARKS.md', 'utf8') : '# Benchmarks\n';
const start = bm.indexOf('\n## Viewer\n');
let out;
if (start < 0) {
    out = bm.replace(/\n*$/, '\n\n') + section;
} else {
    const next = bm.indexOf('\n## ', start + 1);
    out = bm.slice(0, start + 1) + section + (next < 0 ? '' : bm.slice(next + 1));
}
writeFileSync('BENCHMARKS.md', out);
