// Loads profile files into speedscope, the real application from its npm package, in
// Debian's chromium, and checks that what speedscope imported is what kestrel wrote.
//
//   node speedscope_probe.mjs FILE EXPECT.json [FILE EXPECT.json ...]
//
// EXPECT.json: {"profiles": [{"name": S|null, "unit": S, "stacks": [
//                 {"frames": [{"name": S, "file": S, "line": N}, ...root first],
//                  "weight": N}, ...]}]}
// An expected profile may give "idle_weight": N, weight imported as idle time (the
// "(idle)" node of a cpuprofile), which is in the total and on no stack.
// Every profile speedscope built must match one expected profile in order: its name
// (unless null), its weight unit, and, for every distinct root-to-leaf path, the
// self weight speedscope attributes to it (identical paths summed). Frames compare
// by name, file and line exactly, byte for byte.
//
// For a profile recorded from a real program, EXPECT.json may instead be
//   {"unit": S, "total_weight": N, "names": [S, ...]}
// (taken from kestrel's profile.json): the weights of all imported profiles must sum
// to N, in that unit, and every name listed must be an imported frame.
//
// speedscope is loaded the way its own command-line tool loads a file (the
// #localProfilePath hash and window.speedscope.loadFileFromBase64). Its bundle keeps
// the imported profile group private, so the probe copies the bundle and wraps the
// one call that imports a file so that the group is also kept on window; the rest
// of the application runs unchanged, and the page must show no error.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {chromium} from 'playwright-core'

const here = path.dirname(fileURLToPath(import.meta.url))
const release = path.join(here, 'node_modules/speedscope/dist/release')

function fail(msg) {
  console.error(`speedscope_probe: ${msg}`)
  process.exit(1)
}

const args = process.argv.slice(2)
if (args.length === 0 || args.length % 2) fail('usage: speedscope_probe.mjs FILE EXPECT.json ...')

// A private copy of speedscope's release directory with the import call wrapped.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kestrel-speedscope-'))
for (const f of fs.readdirSync(release)) fs.copyFileSync(path.join(release, f), path.join(dir, f))
const bundle = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f))
if (!bundle) fail(`no speedscope bundle in ${release}`)
const src = fs.readFileSync(path.join(dir, bundle), 'utf8')
const hook = /loadFileFromBase64:\((\w+),(\w+)\)=>\{this\.loadProfile\(\(\)=>(\w+)\(\1,\2\)\)\}/
const m = src.match(hook)
if (!m) fail(`speedscope ${bundle}: the file import call was not found (speedscope version changed?)`)
const [, a, b, importer] = m
fs.writeFileSync(
  path.join(dir, bundle),
  src.replace(
    hook,
    `loadFileFromBase64:(${a},${b})=>{this.loadProfile(()=>${importer}(${a},${b})` +
      `.then(g=>(window.__kestrelGroup=g,g),e=>{window.__kestrelError=String(e);throw e}))}`,
  ),
)

// Runs in the page: everything speedscope built, in plain data.
function describeGroup() {
  const g = window.__kestrelGroup
  if (!g) return null
  const out = {name: g.name, profiles: []}
  for (const p of g.profiles) {
    const stacks = new Map()
    const walk = (node, trail) => {
      const here = node.frame && node.frame.name !== undefined && node.parent ? [...trail, node.frame] : trail
      const self = node.getSelfWeight()
      if (self !== 0 && here.length) {
        const frames = here.map(f => ({name: f.name, file: f.file ?? '', line: f.line ?? 0}))
        const key = JSON.stringify(frames)
        stacks.set(key, (stacks.get(key) || 0) + self)
      }
      for (const c of node.children) walk(c, here)
    }
    walk(p.getAppendOrderCalltreeRoot(), [])
    out.profiles.push({
      name: p.getName(),
      unit: p.getWeightUnit(),
      total: p.getTotalWeight(),
      stacks: [...stacks].map(([k, w]) => ({frames: JSON.parse(k), weight: w})),
    })
  }
  return out
}

function key(frames) {
  return JSON.stringify(frames.map(f => ({name: f.name, file: f.file ?? '', line: f.line ?? 0})))
}

function compareTotals(file, got, want) {
  const errs = []
  let total = 0
  const names = new Set()
  for (const p of got.profiles) {
    total += p.total
    if (p.unit !== want.unit) errs.push(`profile ${JSON.stringify(p.name)}: unit ${p.unit}, wrote ${want.unit}`)
    for (const s of p.stacks) for (const f of s.frames) names.add(f.name)
  }
  if (Math.abs(total - want.total_weight) > 1e-6 * Math.max(1, want.total_weight))
    errs.push(`total weight ${total}, wrote ${want.total_weight}`)
  for (const n of want.names) if (!names.has(n)) errs.push(`function ${JSON.stringify(n)} not imported`)
  if (!want.names.length || !want.total_weight) errs.push('the expectation is empty (nothing would be checked)')
  for (const e of errs) console.error(`${file}: ${e}`)
  if (!errs.length)
    console.log(`${file}: speedscope imported ${got.profiles.length} profiles, total ${total} ${want.unit}, ${want.names.length} functions, as written`)
  return errs.length
}

function compare(file, got, want) {
  if (!want.profiles) return compareTotals(file, got, want)
  const errs = []
  if (got.profiles.length !== want.profiles.length)
    errs.push(`${got.profiles.length} profiles imported, ${want.profiles.length} written`)
  const n = Math.min(got.profiles.length, want.profiles.length)
  for (let i = 0; i < n; i++) {
    const g = got.profiles[i]
    const w = want.profiles[i]
    const where = `profile ${i} (${JSON.stringify(g.name)})`
    if (w.name !== null && g.name !== w.name) errs.push(`${where}: name, wrote ${JSON.stringify(w.name)}`)
    if (g.unit !== w.unit) errs.push(`${where}: unit ${g.unit}, wrote ${w.unit}`)
    const wantMap = new Map()
    for (const s of w.stacks) wantMap.set(key(s.frames), (wantMap.get(key(s.frames)) || 0) + s.weight)
    const gotMap = new Map(g.stacks.map(s => [key(s.frames), s.weight]))
    let total = 0
    for (const [k, wt] of wantMap) {
      total += wt
      const gw = gotMap.get(k)
      if (gw === undefined) errs.push(`${where}: stack missing: ${k}`)
      else if (Math.abs(gw - wt) > 1e-6 * Math.max(1, Math.abs(wt)))
        errs.push(`${where}: stack ${k}: weight ${gw}, wrote ${wt}`)
    }
    for (const k of gotMap.keys()) if (!wantMap.has(k)) errs.push(`${where}: stack not written: ${k}`)
    // Time speedscope imports as idle (a cpuprofile's "(idle)" node): in the total only.
    total += w.idle_weight || 0
    if (Math.abs(g.total - total) > 1e-6 * Math.max(1, total))
      errs.push(`${where}: total weight ${g.total}, wrote ${total}`)
    if (wantMap.size === 0) errs.push(`${where}: the expectation has no stacks (nothing would be checked)`)
  }
  for (const e of errs) console.error(`${file}: ${e}`)
  if (!errs.length) {
    const stacks = got.profiles.reduce((s, p) => s + p.stacks.length, 0)
    console.log(`${file}: speedscope imported ${got.profiles.length} profiles, ${stacks} stacks, as written`)
  }
  return errs.length
}

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--allow-file-access-from-files'],
})
let failures = 0
try {
  for (let i = 0; i < args.length; i += 2) {
    const file = args[i]
    const want = JSON.parse(fs.readFileSync(args[i + 1], 'utf8'))
    const loader = path.join(dir, `load-${i}.js`)
    const b64 = fs.readFileSync(file).toString('base64')
    fs.writeFileSync(
      loader,
      `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ${JSON.stringify(b64)})`,
    )
    const page = await browser.newPage()
    const pageErrors = []
    page.on('pageerror', e => pageErrors.push(String(e)))
    page.on('dialog', d => {
      pageErrors.push(`dialog: ${d.message()}`)
      d.dismiss()
    })
    await page.goto(`file://${dir}/index.html#localProfilePath=${loader}`)
    await page
      .waitForFunction(() => window.__kestrelGroup || window.__kestrelError, null, {timeout: 60000})
      .catch(() => pageErrors.push('speedscope did not finish importing within 60 s'))
    const error = await page.evaluate(() => window.__kestrelError || null)
    if (error) pageErrors.push(`import failed: ${error}`)
    // The application must go on to show the profile, not its error screen.
    await page.waitForSelector('canvas', {timeout: 30000}).catch(() => pageErrors.push('no flame graph canvas'))
    const body = await page.evaluate(() => document.body.innerText)
    if (body.includes('Something went wrong')) pageErrors.push('speedscope shows "Something went wrong"')
    const got = await page.evaluate(describeGroup)
    await page.close()
    if (pageErrors.length || !got) {
      for (const e of pageErrors) console.error(`${file}: ${e}`)
      if (!got) console.error(`${file}: speedscope imported nothing`)
      failures++
      continue
    }
    failures += compare(file, got, want) ? 1 : 0
  }
} finally {
  await browser.close()
  fs.rmSync(dir, {recursive: true, force: true})
}
process.exit(failures ? 1 : 0)
