/* kestrel viewer: the embedded profile (docs/viewer-data.md) decoded into typed arrays,
 * and the weights of a selection (sample type, state, thread). Pure functions. */
'use strict';
const KProfile = (() => {
    const STATE_ONCPU = 0, STATE_WAITING = 1;

    function fail(what)
    {
        throw new Error('kestrel viewer: bad profile data: ' + what);
    }

    /* The JSON object of the page into the working model; checks every index. */
    function decode(d)
    {
        if (!d || d.version !== 1) fail('version is not 1');
        const frames = (d.frames || []).map((f) => ({
            name: String(f[0]), file: f[1] == null ? '' : String(f[1]), line: f[2] | 0,
        }));
        const nf = frames.length;
        const stacks = (d.stacks || []).map((s, i) => {
            const a = Int32Array.from(s);
            for (const f of a) if (f < 0 || f >= nf) fail('stack ' + i + ' names frame ' + f);
            return a;
        });
        const types = (d.sample_types || []).map((t) => ({name: String(t.name), unit: String(t.unit)}));
        if (!types.length) fail('no sample types');
        const processes = (d.processes || []).map((q) => ({
            pid: q.pid == null ? null : q.pid, ppid: q.ppid == null ? null : q.ppid,
            name: String(q.name == null ? '?' : q.name), chain: q.chain == null ? '' : String(q.chain),
        }));
        const threads = (d.threads || []).map((t) => ({
            label: String(t.label == null ? '' : t.label), fiber: t.fiber | 0,
            tid: t.tid == null ? null : t.tid, name: t.name == null ? '' : String(t.name),
            process: Number.isInteger(t.process) && t.process >= 0 && t.process < processes.length ? t.process : -1,
        }));
        if (!threads.length) threads.push({label: 'all', fiber: 0, tid: null, name: '', process: -1});
        const s = d.samples || {};
        const n = (s.stack || []).length;
        const col = (a, T) => {
            const out = new T(n);
            if (a) for (let i = 0; i < n; i++) out[i] = a[i] || 0;
            return out;
        };
        const samples = {
            n,
            stack: col(s.stack, Int32Array),
            thread: col(s.thread, Int32Array),
            state: col(s.state, Uint8Array),
            time: col(s.time, Float64Array),
            values: types.map((_, t) => col((s.values || [])[t], Float64Array)),
        };
        for (let i = 0; i < n; i++) {
            if (samples.stack[i] < 0 || samples.stack[i] >= stacks.length) fail('sample ' + i + ' stack');
            if (samples.thread[i] < 0 || samples.thread[i] >= threads.length) fail('sample ' + i + ' thread');
        }
        const sources = new Map();
        for (const src of d.sources || [])
            sources.set(String(src.file), src.text != null ? {text: String(src.text)}
                                                             : {missing: String(src.missing || 'not readable')});
        const def = d.default_type | 0;
        /* A CPU sample may stand for several (samples/count N: a pprof sample, or a long
         * run's counts past the runtime's row table): N in every count. */
        const ci = d.kind === 'heap' ? -1 : types.findIndex((t) => t.name === 'samples' && t.unit === 'count');
        samples.count = ci >= 0 ? samples.values[ci].map((c) => (c > 1 ? c : 1)) : null;
        return {
            kind: d.kind === 'heap' ? 'heap' : 'cpu',
            title: String(d.title || 'profile'),
            meta: d.meta || {},
            types, defaultType: def >= 0 && def < types.length ? def : 0,
            threads, processes, frames, stacks, samples, sources, diff: decodeDiff(d.diff),
        };
    }

    /* kestrel diff's verdicts per function (docs/viewer-data.md `diff`), keyed by file and
     * name as the page's functions are; null for a plain profile. */
    function decodeDiff(d)
    {
        if (!d) return null;
        const side = (x) => ({
            base: +x.base || 0, baseSe: +x.base_se || 0, now: +x.new || 0, nowSe: +x.new_se || 0,
            z: +x.z || 0, real: x.real === true,
        });
        const byKey = new Map();
        for (const f of d.functions || [])
            byKey.set((f.file == null ? '' : String(f.file)) + '\u0000' + String(f.name),
                      {presence: String(f.presence || 'both'), self: side(f.self || {}), total: side(f.total || {})});
        return {base: String(d.base || ''), absolute: d.absolute === true, byKey};
    }

    /* sel: {type, state: 'both'|'cpu'|'wait', thread: -1 (all) or an index,
     * process: -1 (all) or an index into p.processes}. */
    function keeps(p, sel, i)
    {
        if (sel.thread >= 0 && p.samples.thread[i] !== sel.thread) return false;
        if (sel.process >= 0 && p.threads[p.samples.thread[i]].process !== sel.process) return false;
        if (p.kind === 'cpu' && sel.state !== 'both') {
            const st = p.samples.state[i];
            if (sel.state === 'cpu' ? st !== STATE_ONCPU : st !== STATE_WAITING) return false;
        }
        return true;
    }

    /* Weight and sample count of every stack under a selection. */
    function stackWeights(p, sel)
    {
        const w = new Float64Array(p.stacks.length), cnt = new Float64Array(p.stacks.length);
        const v = p.samples.values[sel.type];
        let total = 0, n = 0;
        for (let i = 0; i < p.samples.n; i++) {
            if (!keeps(p, sel, i) || !(v[i] > 0)) continue;
            const s = p.samples.stack[i];
            const c = p.samples.count ? p.samples.count[i] : 1;
            w[s] += v[i];
            cnt[s] += c;
            total += v[i];
            n += c;
        }
        return {w, cnt, total, n};
    }

    /* Indices of the selected samples in time order within each thread (thread, time). */
    function timeOrder(p, sel)
    {
        const v = p.samples.values[sel.type];
        const idx = [];
        for (let i = 0; i < p.samples.n; i++) if (keeps(p, sel, i) && v[i] > 0) idx.push(i);
        const th = p.samples.thread, t = p.samples.time;
        /* A sample without a time (-1: past the row table of a long run) after every
         * timed one of its thread. */
        const key = (i) => (t[i] < 0 ? Infinity : t[i]);
        idx.sort((a, b) => th[a] - th[b] || key(a) - key(b) || a - b);
        return Int32Array.from(idx);
    }

    return {decode, stackWeights, timeOrder, STATE_ONCPU, STATE_WAITING};
})();
if (typeof module === 'object') module.exports = KProfile;
