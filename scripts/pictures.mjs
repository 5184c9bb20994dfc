// Makes the docs' picture of the viewer from the viewer as it is now: builds
// examples/demo.c as examples/rules.mk does (its file named /usr/src/kestrel/..., not
// after this checkout), records it with build/bin/kestrel, opens its page in Debian's chromium
// (headless, playwright-core as tests/viewer drives it), points at hash_strings so its
// tooltip shows, and writes docs/viewer.png. Beside it, docs/viewer.png.sources holds
// the sha256 of every source of the viewer (web/, as web/rules.mk assembles it), which
// tests/packaging/test_pictures.sh compares with web/ now: a picture older than the
// viewer's code fails it.
//   make pictures   (runs: node scripts/pictures.mjs, after make)
import {spawnSync} from 'node:child_process';
import {mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs';
import {createHash} from 'node:crypto';
import {tmpdir} from 'node:os';
import {join, resolve} from 'node:path';
import {chromium} from '../web/node_modules/playwright-core/index.mjs';

// `sha256sum` of the viewer's sources in byte order of their names (web/rules.mk's
// VIEWER_SRCS), as the test computes it.
function sourcesText()
{
    const names = readdirSync('web').filter((f) => /\.(js|css)$/.test(f)).map((f) => 'web/' + f);
    return ['web/viewer.html', 'web/inline.awk', ...names].sort()
        .map((f) => createHash('sha256').update(readFileSync(f)).digest('hex') + '  ' + f + '\n').join('');
}

const work = mkdtempSync(join(tmpdir(), 'kestrel-pictures-'));
try {
    const cc = spawnSync('sh', ['-c', 'command -v clang'], {encoding: 'utf8'}).status === 0 ? 'clang' : 'cc';
    const b = spawnSync(cc, ['-std=gnu11', '-O2', '-g', '-fno-omit-frame-pointer', '-mno-omit-leaf-frame-pointer', '-pthread',
                             '-fdebug-prefix-map=' + resolve('.') + '=/usr/src/kestrel', '-o', join(work, 'demo'),
                             resolve('examples/demo.c'), '-lm'], {encoding: 'utf8'});
    if (b.status !== 0) throw new Error(cc + ' examples/demo.c failed: ' + b.stderr);
    const r = spawnSync(resolve('build/bin/kestrel'), ['record', '-o', join(work, 'demo'), '--report=' + join(work, 'report'), '--',
                        join(work, 'demo')], {encoding: 'utf8', timeout: 120000});
    if (r.status !== 0) throw new Error('kestrel record of the demo failed: ' + r.stderr);
    const context = await chromium.launchPersistentContext(mkdtempSync(join(work, 'profile-')), {
        executablePath: '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
               '--disable-sync', '--no-first-run', '--font-render-hinting=none'],
        viewport: {width: 1280, height: 640},
    });
    try {
        const page = await context.newPage();
        await page.goto('file://' + join(work, 'demo.html'));
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const rects = await page.evaluate(() => window.kestrelViewer.boxes('hash_strings'));
        if (!rects.length) throw new Error('the demo\'s page draws no hash_strings');
        const c = await page.locator('#flame').boundingBox();
        await page.mouse.move(c.x + rects[0].x + Math.min(rects[0].w / 3, 120), c.y + rects[0].y + rects[0].h / 2);
        await page.waitForTimeout(200);
        await page.screenshot({path: join(work, 'viewer.png')});
        await page.close();
    } finally {
        await context.close();
    }
    renameSync(join(work, 'viewer.png'), 'docs/viewer.png');
    writeFileSync('docs/viewer.png.sources', sourcesText());
    console.log('wrote docs/viewer.png and docs/viewer.png.sources');
} finally {
    rmSync(work, {recursive: true, force: true});
}
